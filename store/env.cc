#include "store/env.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>

#include "store/fork_locks.h"

namespace nvrtc_cache::store {
namespace {

int result(int rc) { return rc == 0 ? 0 : errno; }

class SystemEnv final : public Env {
 public:
  std::int64_t now_seconds() override { return static_cast<std::int64_t>(std::time(nullptr)); }
  int make_directory(const std::string& path, mode_t mode) override { return result(::mkdir(path.c_str(), mode)); }
  int lstat(const std::string& path, struct stat* out) override { return result(::lstat(path.c_str(), out)); }
  int stat(const std::string& path, struct stat* out) override { return result(::stat(path.c_str(), out)); }
  int statfs(const std::string& path, struct statfs* out) override { return result(::statfs(path.c_str(), out)); }
  int rename(const std::string& from, const std::string& to) override {
    return result(::rename(from.c_str(), to.c_str()));
  }
  int chmod(const std::string& path, mode_t mode) override { return result(::chmod(path.c_str(), mode)); }
  int read_at(const std::string& path, void* buffer, std::size_t size, off_t offset, std::size_t* read) override {
    *read = 0;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    int rc = 0;
    while (*read < size) {
      const ssize_t n = ::pread(fd, static_cast<char*>(buffer) + *read, size - *read,
                                offset + static_cast<off_t>(*read));
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
};

}  // namespace

Env* Env::system() {
  // Published lock-free (no static guard a forked child could inherit in progress); leaked.
  static constinit std::atomic<SystemEnv*> env{nullptr};
  return publish_once(env, [] { return new SystemEnv(); });
}

}  // namespace nvrtc_cache::store
