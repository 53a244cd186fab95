#include "store/remote/tier_directory.h"

#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "platform/file_at.h"
#include "util/clock.h"

namespace nvrtc_cache::store::remote {
namespace {

constexpr mode_t kSharedMode = 0777;  // less the umask
constexpr std::string_view kTemporaryPrefix = ".tmp-";
constexpr std::size_t kEntryDigits = 32;

bool all_of(std::string_view s, std::string_view allowed) {
  return !s.empty() && s.find_first_not_of(allowed) == std::string_view::npos;
}
bool is_hex(std::string_view s) { return all_of(s, "0123456789abcdef"); }
bool is_decimal(std::string_view s) { return all_of(s, "0123456789"); }

TierDirectoryOpen failed(int error, bool refused, std::string detail) {
  TierDirectoryOpen out;
  out.error = error;
  out.refused = refused;
  out.detail = std::move(detail);
  return out;
}

// The ownership rule of the header: the caller, root, the parent's owner, or anyone the parent
// admits as a writer.
// Where no owner is reported (Windows), the directory's ACL decides who may use it.
bool owner_allowed(const struct stat& dir, const struct stat& parent) {
  if (platform::owner_of(dir) != platform::Owner::kAnotherUser) return true;
  if (dir.st_uid == parent.st_uid) return true;
  return (parent.st_mode & 0022) != 0;  // group- or other-writable
}

TierDirectoryOpen opened(DirectoryHandle handle, std::string shown, platform::Env& env) {
  TierDirectoryOpen out;
  if (const int rc = env.stat_at(handle.fd(), "", &out.directory.st); rc != 0) {
    return failed(rc, false, "cannot stat " + shown + ": " + std::strerror(rc));
  }
  if (!S_ISDIR(out.directory.st.st_mode)) return failed(ENOTDIR, true, shown + " is not a directory");
  out.directory.handle = std::move(handle);
  out.directory.shown = std::move(shown);
  return out;
}

std::string hex64(std::uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) out[static_cast<std::size_t>(i)] = kDigits[value & 15];
  return out;
}

}  // namespace

TierDirectoryOpen open_tier_path(const std::string& path, platform::Env& env) {
  // "<path>/.": every component of the configured path is resolved (links included), and what is
  // opened is the directory they lead to.
  int fd = -1;
  if (const int rc = env.open_directory_at(AT_FDCWD, path + "/.", &fd); rc != 0) {
    return failed(rc, false, "cannot open " + path + ": " + std::strerror(rc));
  }
  return opened(DirectoryHandle(fd), path, env);
}

TierDirectoryOpen open_tier_subdirectory(const TierDirectory& parent, const std::string& name, bool create,
                                         platform::Env& env) {
  std::string shown = parent.shown + "/" + name;
  DirectoryWalk walk = open_subdirectory(parent.handle, name, shown, create, env, kSharedMode);
  if (!walk.handle.valid()) {
    if (walk.unsafe) walk.detail += " (not followed)";
    return failed(walk.error, walk.unsafe, std::move(walk.detail));
  }
  TierDirectoryOpen out = opened(std::move(walk.handle), std::move(shown), env);
  if (out.ok() && !owner_allowed(out.directory.st, parent.st)) {
    return failed(EPERM, true,
                  out.directory.shown + " is owned by another user (uid " + std::to_string(out.directory.st.st_uid) +
                      ") and " + parent.shown + " admits no other writers");
  }
  return out;
}

bool is_bucket_name(std::string_view name) { return name.size() == 2 && is_hex(name); }

bool is_entry_name(std::string_view name, std::string_view bucket) {
  return name.size() == kEntryDigits && is_hex(name) && is_bucket_name(bucket) && name.starts_with(bucket);
}

bool is_temporary_name(std::string_view name, std::string_view bucket) {
  if (!name.starts_with(kTemporaryPrefix)) return false;
  name.remove_prefix(kTemporaryPrefix.size());
  if (name.size() < kEntryDigits + 2 || !is_entry_name(name.substr(0, kEntryDigits), bucket) ||
      name[kEntryDigits] != '-') {
    return false;
  }
  name.remove_prefix(kEntryDigits + 1);
  if (name.size() == 16 && is_hex(name)) return true;  // this version: 16 random hex digits
  // Earlier versions: <pid>-<sequence>-<clock>, all decimal.
  int parts = 0;
  for (std::size_t begin = 0; begin <= name.size(); ++parts) {
    std::size_t end = name.find('-', begin);
    if (end == std::string_view::npos) end = name.size();
    if (!is_decimal(name.substr(begin, end - begin))) return false;
    begin = end + 1;
  }
  return parts == 3;
}

std::string temporary_name(std::string_view entry) {
  std::uint64_t random = 0;
  if (!platform::random_bytes(&random, sizeof random)) {
    static std::atomic<std::uint64_t> sequence{0};
    const std::uint64_t seed[4] = {static_cast<std::uint64_t>(::getpid()), sequence.fetch_add(1),
                                   static_cast<std::uint64_t>(util::steady_ns()),
                                   static_cast<std::uint64_t>(util::realtime_ns())};
    random = XXH3_64bits(seed, sizeof seed);
  }
  return std::string(kTemporaryPrefix) + std::string(entry) + "-" + hex64(random);
}

}  // namespace nvrtc_cache::store::remote
