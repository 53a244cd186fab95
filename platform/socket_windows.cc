// Sockets on Windows: Winsock 2 (platform/socket.h). Started once with WSAStartup(2.2); sockets are
// made non-inheritable (WSA_FLAG_NO_HANDLE_INHERIT) and non-blocking (FIONBIO); sends are WSASend
// of the pieces as WSABUFs; waits are select() on the one socket, with its exception set, where a
// failed non-blocking connect shows. Every call keeps the thread's last-error value (Winsock's error
// is that value).
#include <winsock2.h>
#include <ws2tcpip.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "platform/socket.h"
#include "platform/windows/last_error.h"

namespace nvrtc_cache::platform {
namespace {

using windows::LastErrorKept;

int errno_of(int error) {
  switch (error) {
    case WSAEWOULDBLOCK:
      return EAGAIN;
    case WSAEINPROGRESS:
    case WSAEALREADY:
      return EINPROGRESS;
    case WSAEINTR:
      return EINTR;
    case WSAECONNRESET:
    case WSAECONNABORTED:
    case WSAENETRESET:
      return ECONNRESET;
    case WSAESHUTDOWN:
    case WSAENOTCONN:
      return EPIPE;
    case WSAECONNREFUSED:
      return ECONNREFUSED;
    case WSAETIMEDOUT:
      return ETIMEDOUT;
    case WSAEHOSTUNREACH:
    case WSAEHOSTDOWN:
      return EHOSTUNREACH;
    case WSAENETUNREACH:
    case WSAENETDOWN:
      return ENETUNREACH;
    case WSAEADDRNOTAVAIL:
      return EADDRNOTAVAIL;
    case WSAEAFNOSUPPORT:
      return EAFNOSUPPORT;
    case WSAEMFILE:
      return EMFILE;
    case WSAENOBUFS:
      return ENOBUFS;
    case WSAEACCES:
      return EACCES;
    case WSANOTINITIALISED:
    case WSASYSNOTREADY:
      return ENOSYS;
    default:
      return EIO;
  }
}

int last_socket_errno() { return errno_of(WSAGetLastError()); }

SOCKET socket_of(SocketHandle socket) { return static_cast<SOCKET>(socket); }

}  // namespace

int socket_startup() {
  const LastErrorKept kept;
  static const int started = [] {
    WSADATA data;
    return WSAStartup(MAKEWORD(2, 2), &data) == 0 ? 0 : ENOSYS;
  }();
  return started;
}

int socket_open(int family, SocketHandle* out) {
  const LastErrorKept kept;
  *out = kNoSocket;
  if (const int rc = socket_startup(); rc != 0) return rc;
  const SOCKET s = WSASocketW(family, SOCK_STREAM, 0, nullptr, 0, WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
  if (s == INVALID_SOCKET) return last_socket_errno();
  u_long non_blocking = 1;
  if (ioctlsocket(s, static_cast<long>(FIONBIO), &non_blocking) != 0) {
    const int error = last_socket_errno();
    closesocket(s);
    return error;
  }
  *out = static_cast<SocketHandle>(s);
  return 0;
}

void socket_close(SocketHandle socket) {
  const LastErrorKept kept;
  if (socket != kNoSocket) closesocket(socket_of(socket));
}

void socket_no_delay(SocketHandle socket) {
  const LastErrorKept kept;
  const BOOL on = TRUE;
  (void)setsockopt(socket_of(socket), IPPROTO_TCP, TCP_NODELAY, reinterpret_cast<const char*>(&on), sizeof on);
}

int socket_connect(SocketHandle socket, const sockaddr* address, socklen_t length) {
  const LastErrorKept kept;
  if (::connect(socket_of(socket), address, length) == 0) return 0;
  const int error = WSAGetLastError();
  return error == WSAEWOULDBLOCK ? EINPROGRESS : errno_of(error);
}

int socket_connect_error(SocketHandle socket) {
  const LastErrorKept kept;
  int error = 0;
  int length = sizeof error;
  if (getsockopt(socket_of(socket), SOL_SOCKET, SO_ERROR, reinterpret_cast<char*>(&error), &length) != 0)
    return last_socket_errno();
  return error == 0 ? 0 : errno_of(error);
}

int socket_receive(SocketHandle socket, char* buffer, std::size_t length, std::size_t* got) {
  const LastErrorKept kept;
  *got = 0;
  const int want = static_cast<int>(std::min<std::size_t>(length, 1u << 30));
  const int n = recv(socket_of(socket), buffer, want, 0);
  if (n >= 0) {
    *got = static_cast<std::size_t>(n);
    return 0;
  }
  return last_socket_errno();
}

int socket_send(SocketHandle socket, const iovec* pieces, std::size_t count, std::size_t* sent) {
  const LastErrorKept kept;
  *sent = 0;
  std::vector<WSABUF> buffers;
  try {
    buffers.reserve(std::min<std::size_t>(count, 1024));
    for (std::size_t i = 0; i < count && buffers.size() < 1024; ++i) {
      // A piece over 1 GiB goes in parts (a WSABUF's length is 32 bits).
      const auto length = static_cast<ULONG>(std::min<std::size_t>(pieces[i].iov_len, 1u << 30));
      buffers.push_back(WSABUF{length, static_cast<CHAR*>(pieces[i].iov_base)});
      if (length < pieces[i].iov_len) break;
    }
  } catch (...) {
    return ENOMEM;
  }
  DWORD n = 0;
  if (WSASend(socket_of(socket), buffers.data(), static_cast<DWORD>(buffers.size()), &n, 0, nullptr, nullptr) != 0)
    return last_socket_errno();
  *sent = n;
  return 0;
}

int socket_wait(SocketHandle socket, short events, int timeout_ms) {
  const LastErrorKept kept;
  fd_set readable, writable, failed;
  FD_ZERO(&readable);
  FD_ZERO(&writable);
  FD_ZERO(&failed);
  const SOCKET s = socket_of(socket);
  if (events & kSocketReadable) FD_SET(s, &readable);
  if (events & kSocketWritable) FD_SET(s, &writable);
  FD_SET(s, &failed);
  timeval timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  const int ready = select(0, &readable, &writable, &failed, &timeout);
  if (ready < 0) return -last_socket_errno();
  if (ready == 0) return 0;
  short found = 0;
  if (FD_ISSET(s, &readable)) found |= kSocketReadable;
  if (FD_ISSET(s, &writable)) found |= kSocketWritable;
  if (FD_ISSET(s, &failed)) found |= kSocketFailed;
  return found;
}

std::string host_name() {
  const LastErrorKept kept;
  char host[64] = {};
  if (socket_startup() == 0) (void)::gethostname(host, sizeof host - 1);
  return host;
}

std::string socket_error_text(int error) {
  switch (error) {
    case ECONNREFUSED:
      return "Connection refused";
    case ECONNRESET:
      return "Connection reset by peer";
    case EPIPE:
      return "Broken pipe";
    case ETIMEDOUT:
      return "Connection timed out";
    case EHOSTUNREACH:
      return "No route to host";
    case ENETUNREACH:
      return "Network is unreachable";
    case EADDRNOTAVAIL:
      return "Cannot assign requested address";
    case ENOSYS:
      return "Winsock is not available";
    default:
      return std::strerror(error);
  }
}

bool unix_socket_address(std::string_view, sockaddr_storage*, socklen_t*) { return false; }

std::size_t unix_socket_path_max() { return 0; }

}  // namespace nvrtc_cache::platform
