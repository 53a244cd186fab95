// Sockets: the calls a shared tier's client connection makes (store/remote/net/stream.h,
// store/remote/net/address_resolver.h), the same on every system. A socket is non-blocking and not
// inherited by children (POSIX: SOCK_NONBLOCK | SOCK_CLOEXEC; Windows: FIONBIO, a Winsock socket
// created without WSA_FLAG_NO_HANDLE_INHERIT is made non-inheritable). Sends never raise a signal in
// the host (POSIX: MSG_NOSIGNAL; Winsock has no SIGPIPE). Every call answers 0 or an errno value with
// its POSIX name (Winsock's WSAE* codes are mapped: WSAEWOULDBLOCK is EAGAIN, or EINPROGRESS for a
// connect; a reset or aborted connection ECONNRESET; a refusal ECONNREFUSED; anything unnamed EIO).
// Waits are select()-style readiness checks against a timeout in milliseconds (Windows: select(),
// which, unlike WSAPoll, reports a failed non-blocking connect at once).
// Implementations: socket_posix.cc and socket_windows.cc, chosen by the build. Windows: Winsock is
// started once per process at the first socket_startup() (never cleaned up: the process's exit does
// it); a unix socket address (sockaddr_un) is not offered (unix_socket_address answers false).
// Contract: thread-safe (no shared state beyond Winsock's start); never throws; errno is not kept
// (the tiers keep it), the thread's last-error value is (Windows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#if defined(_WIN32)
#include <winsock2.h>
#include <ws2tcpip.h>
// The scatter-gather element the tiers build requests from; Winsock's WSABUF carries the same.
struct iovec {
  void* iov_base;
  std::size_t iov_len;
};
#else
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#endif

namespace nvrtc_cache::platform {

// A socket: a descriptor (POSIX) or a SOCKET's value (Windows); kNoSocket when there is none.
using SocketHandle = std::intptr_t;
inline constexpr SocketHandle kNoSocket = -1;

// Readiness to wait for, or that was found.
inline constexpr short kSocketReadable = 1;
inline constexpr short kSocketWritable = 2;
inline constexpr short kSocketFailed = 4;  // found only: hung up or failed

// Starts the socket library (Windows: WSAStartup, once); 0 or an errno value. Every call below and
// getaddrinfo need it; POSIX: nothing to do.
int socket_startup();

// A new non-blocking, non-inherited stream socket of `family` (AF_INET, AF_INET6; AF_UNIX on POSIX).
int socket_open(int family, SocketHandle* out);
void socket_close(SocketHandle socket);
// TCP_NODELAY (best effort).
void socket_no_delay(SocketHandle socket);
// Starts connecting: 0 (connected), EINPROGRESS (wait for kSocketWritable, then socket_connect_error)
// or the failure.
int socket_connect(SocketHandle socket, const sockaddr* address, socklen_t length);
// After a non-blocking connect became writable (or failed): 0 or why it failed (SO_ERROR).
int socket_connect_error(SocketHandle socket);
// One receive without waiting: 0 with *got bytes (0: the peer closed the connection), EAGAIN, or the
// failure.
int socket_receive(SocketHandle socket, char* buffer, std::size_t length, std::size_t* got);
// One gathering send without waiting (at most `count` pieces): 0 with *sent bytes, EAGAIN, or the
// failure (EPIPE / ECONNRESET for a closed connection; never a signal).
int socket_send(SocketHandle socket, const iovec* pieces, std::size_t count, std::size_t* sent);
// Waits up to `timeout_ms` (0: just looks) for `events`: what was found (the events, kSocketFailed
// for a hang-up or failure: the next call says which), 0 on timeout, or -errno.
int socket_wait(SocketHandle socket, short events, int timeout_ms);

// This machine's host name (gethostname; "" when it cannot be had), at most 63 bytes.
std::string host_name();

// The words for a socket call's errno value ("Connection refused").
std::string socket_error_text(int error);

// A unix socket's address at `path` (false where the system has none: Windows).
bool unix_socket_address(std::string_view path, sockaddr_storage* storage, socklen_t* length);
// The longest unix socket path (0 where there is none).
std::size_t unix_socket_path_max();

}  // namespace nvrtc_cache::platform
