// Sockets on POSIX: the system calls (platform/socket.h).
#include <netinet/tcp.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "platform/socket.h"

namespace nvrtc_cache::platform {

int socket_startup() { return 0; }

int socket_open(int family, SocketHandle* out) {
  *out = kNoSocket;
  const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  *out = fd;
  return 0;
}

void socket_close(SocketHandle socket) {
  // close() of this process's descriptor only: a parent's copy of the same socket stays connected.
  if (socket >= 0) ::close(static_cast<int>(socket));
}

void socket_no_delay(SocketHandle socket) {
  const int on = 1;
  (void)setsockopt(static_cast<int>(socket), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

int socket_connect(SocketHandle socket, const sockaddr* address, socklen_t length) {
  int rc;
  do {
    rc = ::connect(static_cast<int>(socket), address, length);
  } while (rc < 0 && errno == EINTR);
  return rc == 0 ? 0 : errno;
}

int socket_connect_error(SocketHandle socket) {
  int error = 0;
  socklen_t length = sizeof error;
  if (getsockopt(static_cast<int>(socket), SOL_SOCKET, SO_ERROR, &error, &length) < 0) return errno;
  return error;
}

int socket_receive(SocketHandle socket, char* buffer, std::size_t length, std::size_t* got) {
  *got = 0;
  for (;;) {
    const ssize_t n = recv(static_cast<int>(socket), buffer, length, MSG_DONTWAIT);
    if (n >= 0) {
      *got = static_cast<std::size_t>(n);
      return 0;
    }
    if (errno == EINTR) continue;
    return errno == EWOULDBLOCK ? EAGAIN : errno;
  }
}

int socket_send(SocketHandle socket, const iovec* pieces, std::size_t count, std::size_t* sent) {
  *sent = 0;
  msghdr message{};
  message.msg_iov = const_cast<iovec*>(pieces);
  message.msg_iovlen = std::min<std::size_t>(count, 1024);
  for (;;) {
    const ssize_t n = sendmsg(static_cast<int>(socket), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      *sent = static_cast<std::size_t>(n);
      return 0;
    }
    if (errno == EINTR) continue;
    return errno == EWOULDBLOCK ? EAGAIN : errno;
  }
}

int socket_wait(SocketHandle socket, short events, int timeout_ms) {
  pollfd p{static_cast<int>(socket), 0, 0};
  if (events & kSocketReadable) p.events |= POLLIN;
  if (events & kSocketWritable) p.events |= POLLOUT;
  const int ready = poll(&p, 1, timeout_ms);
  if (ready < 0) return -errno;
  if (ready == 0) return 0;
  short found = 0;
  if (p.revents & POLLIN) found |= kSocketReadable;
  if (p.revents & POLLOUT) found |= kSocketWritable;
  if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) found |= kSocketFailed;
  return found;
}

std::string host_name() {
  char host[64] = {};
  (void)::gethostname(host, sizeof host - 1);
  return host;
}

std::string socket_error_text(int error) { return std::strerror(error); }

bool unix_socket_address(std::string_view path, sockaddr_storage* storage, socklen_t* length) {
  *storage = {};
  auto* un = reinterpret_cast<sockaddr_un*>(storage);
  un->sun_family = AF_UNIX;
  const std::size_t n = std::min(path.size(), sizeof un->sun_path - 1);  // the URL parser checked it
  std::memcpy(un->sun_path, path.data(), n);
  *length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n + 1);
  return true;
}

std::size_t unix_socket_path_max() { return sizeof(sockaddr_un::sun_path); }

}  // namespace nvrtc_cache::platform
