// Files by name in a directory on POSIX: openat and friends (platform/file_at.h).
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "platform/file_at.h"

namespace nvrtc_cache::platform {

int open_file_at(int dir, const std::string& name, FileHandle* file) {
  const int fd = ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  *file = fd;
  return fd < 0 ? errno : 0;
}

int create_file_at(int dir, const std::string& name, FileHandle* file) {
  const int fd = ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0666);
  *file = fd;
  return fd < 0 ? errno : 0;
}

int read_file_chunk(FileHandle file, void* buffer, std::size_t size, std::uint64_t offset, std::size_t* got) {
  *got = 0;
  for (;;) {
    const ssize_t n = ::pread(static_cast<int>(file), buffer, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    *got = static_cast<std::size_t>(n);
    return 0;
  }
}

int write_file_chunk(FileHandle file, const void* data, std::size_t size, std::size_t* wrote) {
  *wrote = 0;
  for (;;) {
    const ssize_t n = ::write(static_cast<int>(file), data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    *wrote = static_cast<std::size_t>(n);
    return 0;
  }
}

int close_file(FileHandle file) { return ::close(static_cast<int>(file)) == 0 ? 0 : errno; }

bool random_bytes(void* out, std::size_t size) {
  return ::getrandom(out, size, GRND_NONBLOCK) == static_cast<ssize_t>(size);
}

}  // namespace nvrtc_cache::platform
