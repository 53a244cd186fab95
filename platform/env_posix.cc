// Env::system() on POSIX: the system calls, as platform/env.h describes them.
#include "platform/env.h"
#include "platform/file_mapping.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <vector>

#include "platform/fork_locks.h"
#include "util/clock.h"

namespace nvrtc_cache::platform {
namespace {

int result(int rc) { return rc == 0 ? 0 : errno; }

// statfs f_type values of filesystems LMDB cannot safely share a lock file or mmap on.
struct NetworkFilesystem {
  std::int64_t magic;
  const char* name;
};
constexpr NetworkFilesystem kNetworkFilesystems[] = {
    {NFS_SUPER_MAGIC, "NFS"},
    {SMB_SUPER_MAGIC, "SMB"},
    {static_cast<std::int64_t>(0xFF534D42), "CIFS"},
    {static_cast<std::int64_t>(0xFE534D42), "SMB2"},
    {FUSE_SUPER_MAGIC, "FUSE"},
    {V9FS_MAGIC, "9p"},
    {0x0BD00BD0, "Lustre"},
    {0x47504653, "GPFS"},
    {CEPH_SUPER_MAGIC, "Ceph"},
    {AFS_SUPER_MAGIC, "AFS"},
    {CODA_SUPER_MAGIC, "Coda"},
};

class SystemEnv final : public Env {
 public:
  std::int64_t now_seconds() override { return static_cast<std::int64_t>(std::time(nullptr)); }
};

}  // namespace

int Env::stat(const std::string& path, struct stat* out) { return result(::stat(path.c_str(), out)); }

int Env::open_directory_at(int dir, const std::string& name, int* fd) {
  *fd = ::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  return *fd < 0 ? errno : 0;
}

int Env::change_mode_at(int dir, const std::string& name, mode_t mode) {
  return result(::fchmodat(dir, name.c_str(), mode, 0));
}

int Env::reserve_file_at(int dir, const std::string& name, mode_t mode, off_t bytes) {
  const int fd = ::openat(dir, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
  if (fd < 0) return errno;
  struct stat st {};
  int rc = ::fstat(fd, &st) != 0 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
  if (rc == 0) rc = reserve_mapped_space(fd, bytes, /*keep_size=*/true);
  ::close(fd);
  return rc;
}

int Env::make_directory_at(int dir, const std::string& name, mode_t mode) {
  const int rc = result(::mkdirat(dir, name.c_str(), mode));
  // The mode asked for, whatever the umask, where it grants more than the owner's bits (a group-
  // shared cache's 02770: the umask would take the group's write bit and mkdir ignores setgid).
  if (rc == 0 && (mode & ~mode_t{0700}) != 0) (void)change_mode_at(dir, name, mode & 07777);
  return rc;
}

int Env::stat_at(int dir, const std::string& name, struct stat* out) {
  return result(::fstatat(dir, name.c_str(), out, AT_SYMLINK_NOFOLLOW | (name.empty() ? AT_EMPTY_PATH : 0)));
}

int Env::statfs_at(int dir, struct statfs* out) { return result(::fstatfs(dir, out)); }

int Env::read_link_at(int dir, const std::string& name, std::string* target) {
  char buffer[4096];
  const ssize_t n = ::readlinkat(dir, name.c_str(), buffer, sizeof buffer);
  if (n < 0) return errno;
  if (static_cast<std::size_t>(n) == sizeof buffer) return ENAMETOOLONG;
  target->assign(buffer, static_cast<std::size_t>(n));
  return 0;
}

int Env::rename_at(int dir, const std::string& from, const std::string& to) {
  return result(::renameat(dir, from.c_str(), dir, to.c_str()));
}

int Env::remove_at(int dir, const std::string& name, bool directory) {
  return result(::unlinkat(dir, name.c_str(), directory ? AT_REMOVEDIR : 0));
}

int Env::list_directory(int dir, std::vector<std::string>* names) {
  const int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  DIR* stream = ::fdopendir(fd);
  if (stream == nullptr) {
    const int error = errno;
    ::close(fd);
    return error;
  }
  errno = 0;
  while (const dirent* entry = ::readdir(stream)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names->push_back(name);
  }
  const int error = errno;
  ::closedir(stream);
  return error;
}

int Env::read_file_at(int dir, const std::string& name, void* buffer, std::size_t size, off_t offset,
                      std::size_t* read) {
  *read = 0;
  const int fd = ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return errno;
  int rc = 0;
  while (*read < size) {
    const ssize_t n = ::pread(fd, static_cast<char*>(buffer) + *read, size - *read, offset + static_cast<off_t>(*read));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      rc = errno;
      break;
    }
    if (n == 0) break;
    *read += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return rc;
}

int Env::read_file(const std::string& path, std::size_t max_bytes, std::string* content) {
  // Non-blocking, and regular files only: a FIFO or device swapped in for a dependency never stalls
  // the caller (a hit's validation, a replay).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return errno;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return EINVAL;
  }
  content->clear();
  char buffer[1 << 16];
  int rc = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || content->size() > max_bytes) {
      rc = n < 0 ? errno : EFBIG;
      break;
    }
    if (n == 0) break;
    content->append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return rc;
}

int Env::real_path(const std::string& path, std::string* resolved) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) return errno;
  resolved->assign(buffer);
  return 0;
}

int Env::read_link(const std::string& path, std::string* target) {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), buffer, sizeof buffer);
  if (n < 0) return errno;
  target->assign(buffer, static_cast<std::size_t>(n));
  return 0;
}

std::optional<std::string> Env::environment_variable(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::optional<std::string> Env::current_directory() {
  const int saved = errno;
  std::string dir(256, '\0');
  while (::getcwd(dir.data(), dir.size()) == nullptr) {
    if (errno != ERANGE) {
      errno = saved;
      return std::nullopt;
    }
    dir.resize(dir.size() * 2);
  }
  dir.resize(std::char_traits<char>::length(dir.c_str()));
  errno = saved;
  return dir;
}

std::vector<std::string> Env::environment_variable_names() {
  std::vector<std::string> names;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    names.emplace_back(text.substr(0, text.find('=')));
  }
  return names;
}

std::int64_t Env::now_realtime_ns() { return util::realtime_ns(); }

FileId file_id(const struct stat& st) {
  return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

std::int64_t modified_time_ns(const struct stat& st) { return util::to_ns(st.st_mtim); }
std::int64_t changed_time_ns(const struct stat& st) { return util::to_ns(st.st_ctim); }

Owner owner_of(const struct stat& st) {
  if (st.st_uid == ::geteuid()) return Owner::kThisUser;
  return st.st_uid == 0 ? Owner::kRoot : Owner::kAnotherUser;
}

const char* network_filesystem_at(Env& env, int dir) {
  struct statfs fs;
  if (env.statfs_at(dir, &fs) != 0) return nullptr;
  for (const auto& known : kNetworkFilesystems) {
    if (known.magic == static_cast<std::int64_t>(fs.f_type)) return known.name;
  }
  return nullptr;
}

std::optional<std::uint64_t> free_bytes_at(Env& env, int dir) {
  struct statfs fs;
  if (env.statfs_at(dir, &fs) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(fs.f_bavail) * static_cast<std::uint64_t>(fs.f_bsize);
}

int stat_open_file(std::intptr_t file, struct stat* out) { return result(::fstat(static_cast<int>(file), out)); }

int stat_open_file_in(std::intptr_t file, int, const std::string&, struct stat* out) {
  return stat_open_file(file, out);
}

std::string path_naming_directory(int dir) { return "/proc/self/fd/" + std::to_string(dir); }

bool path_naming_directory_is_read_from_it() { return false; }

bool whole_path_open_is_the_walk() { return false; }

void close_directory_descriptor(int fd) { ::close(fd); }

int duplicate_directory_descriptor(int fd) { return ::fcntl(fd, F_DUPFD_CLOEXEC, 0); }

Env* Env::system() {
  // Published lock-free (no static guard a forked child could inherit in progress); leaked.
  static constinit std::atomic<SystemEnv*> env{nullptr};
  return publish_once(env, [] { return new SystemEnv(); });
}

}  // namespace nvrtc_cache::platform
