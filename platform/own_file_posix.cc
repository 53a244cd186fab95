// Opening the user's own files (platform/own_file.h) on POSIX.
#include "platform/own_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "platform/errno_guard.h"

namespace nvrtc_cache::platform {
namespace {

void say(std::string* why, std::string text) {
  if (why) *why = std::move(text);
}

// Writes all of `bytes` at the end of the locked file; on failure cuts the file back to where they
// began. Returns 0 or an errno value.
int write_whole(int fd, std::string_view bytes) {
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      if (written > 0) (void)ftruncate(fd, st.st_size);
      return error;
    }
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

std::string append_whole_locked(const std::string& path, std::string_view bytes) {
  const ErrnoGuard errno_guard;
  std::string why;
  const int fd = open_own_file_for_append(path, &why);
  if (fd < 0) return why.empty() ? std::string("cannot open it") : why;
  int error = 0;
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      error = errno;
      break;
    }
  }
  if (error == 0) error = write_whole(fd, bytes);
  ::close(fd);  // releases the lock
  return error == 0 ? std::string() : std::strerror(error);
}

int open_own_file_for_append(const std::string& path, std::string* why) {
  const ErrnoGuard errno_guard;
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
  if (fd < 0) {
    // ELOOP: O_NOFOLLOW met a link; ENXIO: a FIFO with no reader (or a device), opened non-blocking.
    say(why, errno == ELOOP ? "is a symbolic link" : errno == ENXIO ? "is not a regular file" : std::strerror(errno));
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    say(why, "is not a regular file");
    return -1;
  }
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    say(why, "is owned by another user (uid " + std::to_string(st.st_uid) + ")");
    return -1;
  }
  (void)::fcntl(fd, F_SETFL, O_APPEND);  // blocking writes from here on (a regular file)
  return fd;
}

std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes, std::string* why,
                                             unsigned* mode) {
  const ErrnoGuard errno_guard;
  say(why, "");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno != ENOENT && errno != ENOTDIR) say(why, std::strerror(errno));
    return std::nullopt;
  }
  struct stat st {};
  std::optional<std::string> text;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    say(why, "is not a regular file");
  } else if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    say(why, "is larger than " + std::to_string(max_bytes) + " bytes");
  } else {
    text.emplace(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < text->size()) {
      const ssize_t n = ::read(fd, text->data() + got, text->size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        say(why, std::strerror(errno));
        text.reset();
        break;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (text) text->resize(got);
    if (text && mode) *mode = st.st_mode;
  }
  ::close(fd);
  return text;
}

bool replace_own_file(const std::string& path, const std::string& content, std::string* why) {
  const ErrnoGuard errno_guard;
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    (void)::mkdir(path.substr(0, slash).c_str(), 0700);
  }
  std::string temporary = path + ".XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) {
    say(why, "cannot create a temporary file beside it: " + std::string(std::strerror(errno)));
    return false;
  }
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  const bool complete = written == content.size() && ::fsync(fd) == 0;
  const int write_error = errno;
  ::close(fd);
  if (!complete || ::rename(temporary.c_str(), path.c_str()) != 0) {
    say(why, std::strerror(complete ? errno : write_error));
    ::unlink(temporary.c_str());
    return false;
  }
  return true;
}

}  // namespace nvrtc_cache::platform
