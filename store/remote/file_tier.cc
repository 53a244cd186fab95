#include "store/remote/file_tier.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "store/remote/sealed_value.h"
#include "util/clock.h"
#include "util/errno_guard.h"

namespace nvrtc_cache::store::remote {
namespace {

constexpr std::string_view kTemporaryPrefix = ".tmp-";
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

bool is_miss_errno(int e) { return e == ENOENT || e == ESTALE || e == EBUSY || e == ENOTDIR; }

TierResult result(TierCode code, std::string detail = {}) {
  TierResult r;
  r.code = code;
  r.detail = std::move(detail);
  return r;
}

class FileTier final : public Tier {
 public:
  FileTier(const TierUrl& url, const TierOptions& options)
      : name_(url.display()), base_(url.path), root_(url.path + "/" + options.prefix), options_(options) {}

  const std::string& display_name() const override { return name_; }
  bool writable() const override { return !options_.read_only; }

  TierResult get(std::string_view key, Deadline deadline) override {
    const util::ErrnoGuard errno_guard;
    if (Clock::now() >= deadline) return result(TierCode::kTimeout, "deadline passed before the read");
    const std::string path = root_ + "/" + file_tier_entry_name(key);
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
      if (is_miss_errno(errno)) return result(TierCode::kMiss);
      return result(TierCode::kError, "cannot open an entry: " + std::string(std::strerror(errno)));
    }
    TierResult r = read_entry(fd, deadline);
    ::close(fd);
    return r;
  }

  TierResult put(std::string_view key, std::string_view value, Deadline deadline) override {
    const util::ErrnoGuard errno_guard;
    if (options_.read_only) return result(TierCode::kRefused, "read-only");
    if (Clock::now() >= deadline) return result(TierCode::kTimeout, "deadline passed before the write");
    const std::string name = file_tier_entry_name(key);
    const std::string bucket = root_ + "/" + name.substr(0, 2);
    if (::mkdir(bucket.c_str(), 0777) != 0 && errno != EEXIST) {
      if (errno != ENOENT) return failure("cannot create " + bucket);
      if (::mkdir(root_.c_str(), 0777) != 0 && errno != EEXIST) return failure("cannot create the tier's directory");
      if (::mkdir(bucket.c_str(), 0777) != 0 && errno != EEXIST) return failure("cannot create a bucket directory");
    }
    static std::atomic<std::uint64_t> sequence{0};
    const std::string temporary = bucket + "/" + std::string(kTemporaryPrefix) + name.substr(3) + "-" +
                                  std::to_string(::getpid()) + "-" + std::to_string(sequence.fetch_add(1)) + "-" +
                                  std::to_string(util::steady_ns() & 0xffffff);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0) return failure("cannot create a temporary file");
    std::size_t done = 0;
    TierResult outcome = result(TierCode::kOk);
    while (done < value.size()) {
      if (Clock::now() >= deadline) {
        outcome = result(TierCode::kTimeout, "deadline passed while writing");
        break;
      }
      const ssize_t n = ::write(fd, value.data() + done, std::min(value.size() - done, kChunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        outcome = failure("cannot write an entry");
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0 && outcome.ok()) outcome = failure("cannot write an entry (close)");  // NFS reports here
    if (outcome.ok() && Clock::now() >= deadline) outcome = result(TierCode::kTimeout, "deadline passed before publishing");
    if (outcome.ok() && ::rename(temporary.c_str(), (bucket + "/" + name.substr(3)).c_str()) != 0) {
      outcome = failure("cannot publish an entry (rename)");
    }
    if (!outcome.ok()) ::unlink(temporary.c_str());
    return outcome;
  }

  TierResult for_each_value(const ValueVisitor& visit, Deadline deadline) override {
    const util::ErrnoGuard errno_guard;
    DIR* top = ::opendir(root_.c_str());
    if (top == nullptr) return errno == ENOENT ? result(TierCode::kOk) : failure("cannot list " + root_);
    TierResult outcome = result(TierCode::kOk);
    bool going = true;
    while (going && outcome.ok()) {
      const dirent* bucket = ::readdir(top);
      if (bucket == nullptr) break;
      const std::string_view b = bucket->d_name;
      if (b.size() != 2 || b.find_first_not_of("0123456789abcdef") != std::string_view::npos) continue;
      const int bucket_fd = ::openat(::dirfd(top), bucket->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (bucket_fd < 0) continue;
      DIR* dir = ::fdopendir(bucket_fd);
      if (dir == nullptr) {
        ::close(bucket_fd);
        continue;
      }
      while (const dirent* file = ::readdir(dir)) {
        if (file->d_name[0] == '.') continue;  // ".", "..", abandoned temporaries
        if (Clock::now() >= deadline) {
          outcome = result(TierCode::kTimeout, "deadline passed while listing");
          break;
        }
        const int fd = ::openat(bucket_fd, file->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) continue;  // removed meanwhile, or a link
        struct stat st {};
        const std::int64_t written = ::fstat(fd, &st) == 0 ? static_cast<std::int64_t>(st.st_mtim.tv_sec) : 0;
        TierResult entry = read_entry(fd, deadline);
        ::close(fd);
        if (entry.code == TierCode::kMiss || entry.code == TierCode::kError) continue;  // gone or not a file
        if (!entry.ok()) {
          outcome = entry;
          break;
        }
        if (!visit(entry.value, written)) {
          going = false;
          break;
        }
      }
      ::closedir(dir);
    }
    ::closedir(top);
    return outcome;
  }

  TierResult check(Deadline deadline) override {
    const util::ErrnoGuard errno_guard;
    struct stat st {};
    if (::stat(base_.c_str(), &st) != 0) return failure("cannot reach the directory");
    if (!S_ISDIR(st.st_mode)) return result(TierCode::kError, "not a directory");
    if (options_.read_only) {
      if (::access(base_.c_str(), R_OK | X_OK) != 0) return failure("cannot read the directory");
      return result(TierCode::kOk);
    }
    const std::string key = "nvrtc-cache-check-" + std::to_string(::getpid()) + "-" + std::to_string(util::steady_ns());
    const std::string probe = seal_value(key, "check", nullptr);
    TierResult written = put(key, probe, deadline);
    if (!written.ok()) return written;
    TierResult read = get(key, deadline);
    ::unlink((root_ + "/" + file_tier_entry_name(key)).c_str());
    if (read.code == TierCode::kOk && read.value != probe) return result(TierCode::kError, "read back other bytes");
    if (read.code == TierCode::kMiss) return result(TierCode::kError, "an entry written was not found");
    return read.ok() ? result(TierCode::kOk) : read;
  }

 private:
  static TierResult failure(const std::string& what) {
    const int e = errno;
    if (e == ENOENT) return result(TierCode::kError, what + ": the directory does not exist");
    if (e == EROFS || e == EACCES || e == EPERM) return result(TierCode::kRefused, what + ": " + std::strerror(e));
    return result(TierCode::kError, what + ": " + std::strerror(e));
  }

  TierResult read_entry(int fd, Deadline deadline) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      if (is_miss_errno(errno)) return result(TierCode::kMiss);
      return failure("cannot stat an entry");
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
      const ssize_t n = ::pread(fd, r.value.data() + done, std::min(r.value.size() - done, kChunk),
                                static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        if (is_miss_errno(errno)) return result(TierCode::kMiss);
        return failure("cannot read an entry");
      }
      if (n == 0) break;  // shorter than its size said: unseals as corrupt
      done += static_cast<std::size_t>(n);
    }
    r.value.resize(done);
    return r;
  }

  std::string name_;
  std::string base_;
  std::string root_;
  TierOptions options_;
};

struct Entry {
  std::int64_t mtime_ns;
  std::uint64_t size;
  std::string path;
};

}  // namespace

std::string file_tier_entry_name(std::string_view key) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  const std::uint64_t words[2] = {h.high64, h.low64};
  unsigned char bytes[16];
  for (int w = 0; w < 2; ++w)
    for (int i = 0; i < 8; ++i) bytes[w * 8 + i] = static_cast<unsigned char>(words[w] >> (56 - 8 * i));
  const std::string digits = hex(bytes, sizeof bytes);
  return digits.substr(0, 2) + "/" + digits;
}

std::unique_ptr<Tier> make_file_tier(const TierUrl& url, const TierOptions& options, std::string* problem) {
  if (url.scheme != "file" || url.path.empty() || url.path[0] != '/') {
    if (problem) *problem = "not a shared directory URL: " + url.display();
    return nullptr;
  }
  return std::make_unique<FileTier>(url, options);
}

FileTierEviction evict_file_tier(std::string_view url_text, std::uint64_t max_bytes) {
  const util::ErrnoGuard errno_guard;
  FileTierEviction out;
  std::string problem;
  const std::optional<TierUrl> url = parse_tier_url(url_text, &problem);
  if (!url || url->scheme != "file") {
    out.problem = url ? "not a file:// tier: " + url->display() : problem;
    return out;
  }
  const TierOptions options = tier_options(*url, &problem);
  if (!problem.empty()) {
    out.problem = problem;
    return out;
  }
  const std::string root = url->path + "/" + options.prefix;
  DIR* top = ::opendir(root.c_str());
  if (top == nullptr) {
    if (errno != ENOENT) out.problem = "cannot list " + root + ": " + std::strerror(errno);
    return out;  // an empty tier
  }
  std::vector<Entry> entries;
  const std::int64_t hour_ago = util::realtime_ns() - 3600ll * 1'000'000'000;
  while (dirent* bucket = ::readdir(top)) {
    const std::string_view b = bucket->d_name;
    if (b.size() != 2 || b.find_first_not_of("0123456789abcdef") != std::string_view::npos) continue;
    const std::string bucket_path = root + "/" + std::string(b);
    DIR* dir = ::opendir(bucket_path.c_str());
    if (dir == nullptr) continue;
    while (dirent* file = ::readdir(dir)) {
      const std::string_view f = file->d_name;
      if (f == "." || f == "..") continue;
      std::string path = bucket_path + "/" + std::string(f);
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      const std::int64_t mtime = util::to_ns(st.st_mtim);
      if (f.starts_with(kTemporaryPrefix)) {
        if (mtime < hour_ago && ::unlink(path.c_str()) == 0) ++out.temporaries_removed;
        continue;
      }
      entries.push_back({mtime, static_cast<std::uint64_t>(st.st_size), std::move(path)});
    }
    ::closedir(dir);
  }
  ::closedir(top);
  out.files_before = entries.size();
  for (const Entry& e : entries) out.bytes_before += e.size;
  out.bytes_after = out.bytes_before;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.mtime_ns < b.mtime_ns; });
  for (const Entry& e : entries) {
    if (out.bytes_after <= max_bytes) break;
    if (::unlink(e.path.c_str()) == 0 || errno == ENOENT) {
      ++out.files_removed;
      out.bytes_after -= e.size;
    }
  }
  return out;
}

}  // namespace nvrtc_cache::store::remote
