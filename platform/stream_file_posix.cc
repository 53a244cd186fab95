#include "platform/stream_file.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace nvrtc_cache::platform {

int open_stream_for_reading(const std::string& path, StreamFile* file) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  *file = fd;
  return fd < 0 ? errno : 0;
}

int create_stream_file(const std::string& path, StreamFile* file) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  *file = fd;
  return fd < 0 ? errno : 0;
}

StreamFile standard_input_stream() { return STDIN_FILENO; }
StreamFile standard_output_stream() { return STDOUT_FILENO; }

int read_stream(StreamFile file, void* buffer, std::size_t size, std::size_t* got) {
  for (;;) {
    const ssize_t n = ::read(static_cast<int>(file), buffer, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    *got = static_cast<std::size_t>(n);
    return 0;
  }
}

int write_stream(StreamFile file, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(static_cast<int>(file), bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

std::uint64_t stream_size(StreamFile file) {
  struct stat st {};
  if (::fstat(static_cast<int>(file), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return static_cast<std::uint64_t>(st.st_size);
}

int sync_stream(StreamFile file) { return ::fsync(static_cast<int>(file)) == 0 ? 0 : errno; }

int close_stream(StreamFile file) {
  if (file == STDIN_FILENO || file == STDOUT_FILENO) return 0;
  return ::close(static_cast<int>(file)) == 0 ? 0 : errno;
}

int replace_file(const std::string& from, const std::string& to) {
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

int remove_file(const std::string& path) { return ::unlink(path.c_str()) == 0 ? 0 : errno; }

bool glob_matches(const std::string& pattern, const std::string& name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

int make_directories(const std::string& path, mode_t mode, std::string* failed) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return 0;
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), mode) == 0) {
      ::chmod(prefix.c_str(), mode);  // not narrowed by the umask
    } else if (!prefix.empty() && errno != EEXIST) {
      *failed = prefix;
      return errno;
    }
    if (slash == std::string::npos) return 0;
  }
}

}  // namespace nvrtc_cache::platform
