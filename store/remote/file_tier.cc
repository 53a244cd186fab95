#include "store/remote/file_tier.h"

#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "platform/errno_guard.h"
#include "platform/file_at.h"
#include "platform/paths.h"
#include "platform/env.h"
#include "store/remote/sealed_value.h"
#include "store/remote/tier_directory.h"
#include "util/clock.h"

namespace nvrtc_cache::store::remote {
namespace {

constexpr std::size_t kChunk = 1u << 20;

std::string hex(const void* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    const auto byte = static_cast<const unsigned char*>(data)[i];
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 15]);
  }
  return out;
}

bool is_miss_errno(int e) {
#ifdef ESTALE
  if (e == ESTALE) return true;
#endif
  return e == ENOENT || e == EBUSY || e == ENOTDIR;
}

TierResult result(TierCode code, std::string detail = {}) {
  TierResult r;
  r.code = code;
  r.detail = std::move(detail);
  return r;
}

// The 32 hex digits naming `key`'s entry (its bucket is the first two).
std::string entry_digits(std::string_view key) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  const std::uint64_t words[2] = {h.high64, h.low64};
  unsigned char bytes[16];
  for (int w = 0; w < 2; ++w)
    for (int i = 0; i < 8; ++i) bytes[w * 8 + i] = static_cast<unsigned char>(words[w] >> (56 - 8 * i));
  return hex(bytes, sizeof bytes);
}

TierResult failure(const std::string& what, int e) {
  if (e == ENOENT) return result(TierCode::kError, what + ": the directory does not exist");
  if (e == EROFS || e == EACCES || e == EPERM) return result(TierCode::kRefused, what + ": " + std::strerror(e));
  return result(TierCode::kError, what + ": " + std::strerror(e));
}

// A tier directory that could not be opened: a refusal (a link, not a directory, another owner),
// or for a read a miss when it is missing.
TierResult walk_failure(const TierDirectoryOpen& walk, bool reading) {
  if (reading && !walk.refused && is_miss_errno(walk.error)) return result(TierCode::kMiss);
  const bool refused = walk.refused || walk.error == EROFS || walk.error == EACCES || walk.error == EPERM;
  return result(refused ? TierCode::kRefused : TierCode::kError, walk.detail);
}

class FileTier final : public Tier {
 public:
  FileTier(const TierUrl& url, const TierOptions& options)
      : name_(url.display()), base_(url.path), options_(options), env_(*platform::Env::system()) {}

  const std::string& display_name() const override { return name_; }
  bool writable() const override { return !options_.read_only; }

  TierResult get(std::string_view key, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    if (Clock::now() >= deadline) return result(TierCode::kTimeout, "deadline passed before the read");
    const std::string digits = entry_digits(key);
    const TierDirectoryOpen bucket = open_bucket(digits.substr(0, 2), false);
    if (!bucket.ok()) return walk_failure(bucket, true);
    platform::FileHandle file = platform::kNoFile;
    if (const int rc = platform::open_file_at(bucket.directory.handle.fd(), digits, &file); rc != 0) {
      if (is_miss_errno(rc)) return result(TierCode::kMiss);
      return result(TierCode::kError, "cannot open an entry: " + std::string(std::strerror(rc)));
    }
    TierResult r = read_entry(file, deadline);
    (void)platform::close_file(file);
    return r;
  }

  TierResult put(std::string_view key, std::string_view value, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    if (options_.read_only) return result(TierCode::kRefused, "read-only");
    if (Clock::now() >= deadline) return result(TierCode::kTimeout, "deadline passed before the write");
    const std::string digits = entry_digits(key);
    const TierDirectoryOpen bucket = open_bucket(digits.substr(0, 2), true);
    if (!bucket.ok()) return walk_failure(bucket, false);
    const int dir = bucket.directory.handle.fd();
    // A new file of a random name beside the entry, never an existing one (nor a link's target).
    std::string temporary;
    platform::FileHandle file = platform::kNoFile;
    int created = EEXIST;
    for (int attempt = 0; attempt < 3 && created == EEXIST; ++attempt) {
      temporary = temporary_name(digits);
      created = platform::create_file_at(dir, temporary, &file);
    }
    if (created != 0) return failure("cannot create a temporary file in " + bucket.directory.shown, created);
    std::size_t done = 0;
    TierResult outcome = result(TierCode::kOk);
    while (done < value.size()) {
      if (Clock::now() >= deadline) {
        outcome = result(TierCode::kTimeout, "deadline passed while writing");
        break;
      }
      std::size_t wrote = 0;
      if (const int rc =
              platform::write_file_chunk(file, value.data() + done, std::min(value.size() - done, kChunk), &wrote);
          rc != 0) {
        outcome = failure("cannot write an entry", rc);
        break;
      }
      done += wrote;
    }
    if (const int rc = platform::close_file(file); rc != 0 && outcome.ok())
      outcome = failure("cannot write an entry (close)", rc);  // NFS reports here
    if (outcome.ok() && Clock::now() >= deadline)
      outcome = result(TierCode::kTimeout, "deadline passed before publishing");
    if (outcome.ok()) {
      if (const int rc = env_.rename_at(dir, temporary, digits); rc != 0)
        outcome = failure("cannot publish an entry (rename)", rc);
    }
    if (!outcome.ok()) (void)env_.remove_at(dir, temporary, false);
    return outcome;
  }

  TierResult for_each_value(const ValueVisitor& visit, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    const TierDirectoryOpen root = open_root(false);
    if (!root.ok()) return !root.refused && root.error == ENOENT ? result(TierCode::kOk) : walk_failure(root, false);
    std::vector<std::string> buckets;
    if (const int rc = env_.list_directory(root.directory.handle.fd(), &buckets); rc != 0) {
      return failure("cannot list " + root.directory.shown, rc);
    }
    std::sort(buckets.begin(), buckets.end());
    for (const std::string& b : buckets) {
      if (!is_bucket_name(b)) continue;
      const TierDirectoryOpen bucket = open_tier_subdirectory(root.directory, b, false, env_);
      if (!bucket.ok()) continue;  // removed meanwhile, or not the tier's own: never followed
      const int dir = bucket.directory.handle.fd();
      std::vector<std::string> names;
      if (env_.list_directory(dir, &names) != 0) continue;
      for (const std::string& name : names) {
        if (!is_entry_name(name, b)) continue;  // temporaries, and anything not the tier's
        if (Clock::now() >= deadline) return result(TierCode::kTimeout, "deadline passed while listing");
        platform::FileHandle file = platform::kNoFile;
        if (platform::open_file_at(dir, name, &file) != 0) continue;  // removed meanwhile, or a link
        struct stat st {};
        const std::int64_t written =
            platform::stat_open_file(file, &st) == 0 ? platform::modified_time_ns(st) / 1'000'000'000 : 0;
        TierResult entry = read_entry(file, deadline);
        (void)platform::close_file(file);
        if (entry.code == TierCode::kMiss || entry.code == TierCode::kError) continue;  // gone or not a file
        if (!entry.ok()) return entry;
        if (!visit(entry.value, written)) return result(TierCode::kOk);
      }
    }
    return result(TierCode::kOk);
  }

  TierResult check(Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    const TierDirectoryOpen base = open_tier_path(base_, env_);
    if (!base.ok()) {
      if (base.error == ENOTDIR) return result(TierCode::kError, "not a directory");
      return failure("cannot reach the directory", base.error);
    }
    if (options_.read_only) {
      std::vector<std::string> names;
      if (const int rc = env_.list_directory(base.directory.handle.fd(), &names); rc != 0)
        return failure("cannot read the directory", rc);
      return result(TierCode::kOk);
    }
    const std::string key = "nvrtc-cache-check-" + std::to_string(::getpid()) + "-" + std::to_string(util::steady_ns());
    const std::string probe = seal_value(key, "check", nullptr);
    TierResult written = put(key, probe, deadline);
    if (!written.ok()) return written;
    TierResult read = get(key, deadline);
    const std::string digits = entry_digits(key);
    if (const TierDirectoryOpen bucket = open_bucket(digits.substr(0, 2), false); bucket.ok()) {
      (void)env_.remove_at(bucket.directory.handle.fd(), digits, false);
    }
    if (read.code == TierCode::kOk && read.value != probe) return result(TierCode::kError, "read back other bytes");
    if (read.code == TierCode::kMiss) return result(TierCode::kError, "an entry written was not found");
    return read.ok() ? result(TierCode::kOk) : read;
  }

 private:
  // <dir>/<prefix>, walked from the tier's path (created when missing and `create`).
  TierDirectoryOpen open_root(bool create) {
    TierDirectoryOpen base = open_tier_path(base_, env_);
    if (!base.ok()) return base;
    return open_tier_subdirectory(base.directory, options_.prefix, create, env_);
  }

  TierDirectoryOpen open_bucket(const std::string& bucket, bool create) {
    TierDirectoryOpen root = open_root(create);
    if (!root.ok()) return root;
    return open_tier_subdirectory(root.directory, bucket, create, env_);
  }

  TierResult read_entry(platform::FileHandle file, Deadline deadline) {
    struct stat st {};
    if (const int rc = platform::stat_open_file(file, &st); rc != 0) {
      if (is_miss_errno(rc)) return result(TierCode::kMiss);
      return failure("cannot stat an entry", rc);
    }
    if (!S_ISREG(st.st_mode)) return result(TierCode::kError, "an entry is not a regular file");
    TierResult r = result(TierCode::kOk);
    const std::uint64_t limit = sealed_size(kMaxSealedKey, options_.max_entry_size, true);
    // A file over the cap is returned empty: it unseals as a corrupt value (a miss, counted).
    if (st.st_size <= 0 || static_cast<std::uint64_t>(st.st_size) > limit) return r;
    r.value.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < r.value.size()) {
      if (done > 0 && Clock::now() >= deadline) return result(TierCode::kTimeout, "deadline passed while reading");
      std::size_t n = 0;
      if (const int rc =
              platform::read_file_chunk(file, r.value.data() + done, std::min(r.value.size() - done, kChunk), done, &n);
          rc != 0) {
        if (is_miss_errno(rc)) return result(TierCode::kMiss);
        return failure("cannot read an entry", rc);
      }
      if (n == 0) break;  // shorter than its size said: unseals as corrupt
      done += n;
    }
    r.value.resize(done);
    return r;
  }

  std::string name_;
  std::string base_;
  TierOptions options_;
  platform::Env& env_;
};

}  // namespace

std::string file_tier_entry_name(std::string_view key) {
  const std::string digits = entry_digits(key);
  return digits.substr(0, 2) + "/" + digits;
}

std::unique_ptr<Tier> make_file_tier(const TierUrl& url, const TierOptions& options, std::string* problem) {
  const std::string path = platform::path_of_file_url(url.path);
  if (url.scheme != "file" || !platform::is_absolute_path(path)) {
    if (problem) *problem = "not a shared directory URL: " + url.display();
    return nullptr;
  }
  TierUrl local = url;
  local.path = path;
  return std::make_unique<FileTier>(local, options);
}

}  // namespace nvrtc_cache::store::remote
