// Stream: one client connection to a server over TCP or a unix socket, optionally through TLS, as
// the shared tiers use it (the Redis client, store/remote/redis/resp_connection.h; the HTTP client,
// store/remote/http/http_connection.h). The socket calls are the platform's (platform/socket.h:
// POSIX sockets, or Winsock on Windows). Every wait is a readiness wait against the caller's deadline
// (monotonic): connect is non-blocking, and so are send and recv, so no call blocks past it,
// however slowly the server trickles bytes, and the deadline is checked before every read and
// write too, so a server that floods bytes without end is cut at it as well. A send to a server that closed the
// connection gives EPIPE or ECONNRESET, never a SIGPIPE in the host (MSG_NOSIGNAL; Winsock raises none). With TLS
// (start_tls(); stream_tls.cc, where the build has TLS: tls_settings.h) the same bytes go through a
// TlsSession (store/remote/net/tls_session.h) on the same socket, under the same deadlines, the
// handshake included.
// Contract: one thread at a time per stream; the socket is not inherited by children. fork: the child may
// close its copy (owner_pid() tells whose it is) and must not send on it; closing a copy never
// disturbs the parent's connection (no shutdown()). Never throws (allocation failure aside); errno
// is not preserved here (the tier restores it).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "platform/socket.h"

namespace nvrtc_cache::store::remote::net {

class TlsContext;
class TlsSession;
struct TlsSessionDeleter {
  void operator()(TlsSession* session) const;  // stream_tls.cc (no session is ever made without TLS)
};

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// A socket address the server can be reached at (store/remote/net/address_resolver.h finds them).
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
};

enum class IoCode { kOk, kTimeout, kError };

struct IoResult {
  IoCode code = IoCode::kOk;
  std::string detail;  // what went wrong, in plain words (no secret, no payload bytes)

  bool ok() const { return code == IoCode::kOk; }
};

inline IoResult io_failure(IoCode code, std::string detail) { return IoResult{code, std::move(detail)}; }
// "what: <the error in words>", with a closed or reset connection named as such.
IoResult errno_failure(const char* what, int error);

class Stream {
 public:
  // Connects to the first address that answers before `deadline`; nullptr with *why set otherwise.
  static std::unique_ptr<Stream> connect(std::span<const SocketAddress> addresses, Deadline deadline, IoResult* why);
  // Takes ownership of a connected, non-blocking stream socket (a socketpair in tests).
  static std::unique_ptr<Stream> adopt(platform::SocketHandle socket);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Runs the TLS handshake for `host` (the URL's host name or address) before `deadline`; every
  // later exchange is encrypted. After a failure the stream must be dropped. Fails at once where
  // the build has no TLS.
  IoResult start_tls(std::shared_ptr<const TlsContext> context, const std::string& host, Deadline deadline);
  bool tls() const { return tls_ != nullptr; }

  // Receives at least one byte into buffer (*got >= 1), waiting as needed; *got == 0 when the
  // server closed the connection. A timeout once the deadline has passed, even while bytes keep
  // arriving (the deadline is checked before every read, not only before a wait).
  IoResult receive(char* buffer, std::size_t length, std::size_t* got, Deadline deadline);
  // Sends the iovecs (advancing them) until all are sent; after a failure the stream must be dropped.
  IoResult send_all(std::vector<iovec>& iov, Deadline deadline);

  // True when an idle connection has something to read or was closed by the server (it cannot be
  // trusted for the next request). One readiness check with a zero timeout; a TLS record that
  // carries no data (a TLS 1.3 session ticket) is consumed and does not count.
  bool stale() const;

  pid_t owner_pid() const { return owner_pid_; }
  platform::SocketHandle fd() const { return fd_; }

  // Waits until the socket is ready for `events` (platform::kSocketReadable / kSocketWritable) or
  // the deadline passes.
  IoResult wait_for(short events, Deadline deadline) const;

 private:
  explicit Stream(platform::SocketHandle fd);
  IoResult send_pieces(std::vector<iovec>& iov, Deadline deadline);

  // One TLS read or write (stream_tls.cc): kDone (with the count; a read of 0 bytes: the server
  // closed the connection), kWait (for *wait's readiness, then again) or kFailed (*failure).
  enum class TlsStep { kDone, kWait, kFailed };
  TlsStep tls_read(char* buffer, std::size_t length, std::size_t* got, short* wait, IoResult* failure);
  TlsStep tls_write(const char* data, std::size_t length, std::size_t* sent, short* wait, IoResult* failure);
  // stale() for a TLS connection whose socket is readable (and neither hung up nor failed).
  bool tls_readable_means_stale() const;
  // The deadline the TLS session's socket reads and writes stop at (within one OpenSSL call too).
  void tls_set_deadline(Deadline deadline);

  platform::SocketHandle fd_;
  pid_t owner_pid_;
  std::unique_ptr<TlsSession, TlsSessionDeleter> tls_;  // destroyed before fd_ is closed
};

}  // namespace nvrtc_cache::store::remote::net
