#include "store/remote/secret.h"

#include <blake2.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/errno_guard.h"

namespace nvrtc_cache::store::remote {

Secret secret_from_bytes(std::string_view bytes) {
  Secret secret;
  if (bytes.size() <= secret.key.size()) {
    std::memcpy(secret.key.data(), bytes.data(), bytes.size());
    secret.size = bytes.size();
  } else {
    blake2b(secret.key.data(), bytes.data(), nullptr, secret.key.size(), bytes.size(), 0);
    secret.size = secret.key.size();
  }
  return secret;
}

std::optional<Secret> read_secret_file(const std::string& path, std::string* problem, std::string* warning) {
  const util::ErrnoGuard errno_guard;
  auto fail = [&](const std::string& why) -> std::optional<Secret> {
    if (problem) *problem = "NVRTC_CACHE_REMOTE_SECRET_FILE " + path + ": " + why + "; shared tiers are not used";
    return std::nullopt;
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  std::string bytes;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= (1 << 20);
  if (ok) {
    bytes.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    bytes.resize(done);
  }
  ::close(fd);
  if (!ok) return fail("not a regular file of 1 byte to 1 MiB");
  if (bytes.ends_with("\r\n")) bytes.resize(bytes.size() - 2);
  else if (bytes.ends_with('\n')) bytes.pop_back();
  if (bytes.empty()) return fail("empty");
  if (warning && (st.st_mode & (S_IRGRP | S_IROTH)) != 0) {
    *warning = "NVRTC_CACHE_REMOTE_SECRET_FILE " + path +
               " is readable by group or others; anyone who can read it can sign values every node trusts";
  }
  Secret secret = secret_from_bytes(bytes);
  std::fill(bytes.begin(), bytes.end(), '\0');
  return secret;
}

}  // namespace nvrtc_cache::store::remote
