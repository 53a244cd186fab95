// RespConnection: one connection to a Redis server, speaking RESP2 over a socket this class owns.
// Every wait is a poll() against the caller's deadline (monotonic): connect is non-blocking, and so
// are send and recv, so no call blocks past it, however slowly the server trickles bytes. Commands
// are sent with sendmsg(MSG_NOSIGNAL): a server that closed the connection gives EPIPE, never a
// SIGPIPE in the host. Large arguments are sent from the caller's memory (no copy); a bulk reply is
// received straight into its final string after its announced length was checked against the
// caller's cap, so a hostile or broken server cannot make it allocate more than the cap.
// Why not hiredis (Debian ships 0.14): its timeouts are per read(2)/write(2) (SO_RCVTIMEO), not per
// operation; it writes without MSG_NOSIGNAL; its reader buffers a whole bulk string with no cap and
// then copies it into the reply (a third copy lands in the caller's string); and it would have to
// be dlopen'ed to stay out of the host's scope. The RESP2 subset the tier needs (status, error,
// integer, bulk, nil) is a page of code. Measured on loopback (bench/redis_round_trip.cc), 1 KiB
// round trips cost the same; 1 MiB ones are several times faster here.
// With TLS (start_tls(), rediss://) the same bytes go through a TlsSession (store/remote/redis/
// tls_session.h) on the same socket, under the same deadlines, the handshake included.
// Contract: one thread at a time per connection; the descriptor is close-on-exec. fork: the child
// may close its copy (owner_pid() tells whose it is) and must not send on it; close() of a copy
// never disturbs the parent's connection (no shutdown()). Never throws (allocation failure aside);
// errno is not preserved here (the tier restores it).
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nvrtc_cache::store::remote::redis {

class TlsContext;
class TlsSession;

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// A socket address the server can be reached at (resolved once, when the tier is built).
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

// One RESP2 reply. Arrays are not needed by the commands the tier sends and are reported as errors.
struct Reply {
  enum class Kind { kStatus, kError, kInteger, kBulk, kNil };
  Kind kind = Kind::kNil;
  std::string text;       // kStatus / kError: the line; kBulk: the bytes
  long long integer = 0;  // kInteger
};

// What a server said, made safe for a log line: printable ASCII only, at most 160 characters.
std::string printable(std::string_view text);

class RespConnection {
 public:
  // Connects to the first address that answers before `deadline`; nullptr with *why set otherwise.
  static std::unique_ptr<RespConnection> connect(std::span<const SocketAddress> addresses, Deadline deadline,
                                                 IoResult* why);
  // Takes ownership of a connected, non-blocking stream socket (a socketpair in tests).
  static std::unique_ptr<RespConnection> adopt(int fd);
  ~RespConnection();
  // Runs the TLS handshake for `host` (the URL's host name or address) before `deadline`; every
  // later exchange is encrypted. After a failure the connection must be dropped.
  IoResult start_tls(std::shared_ptr<const TlsContext> context, const std::string& host, Deadline deadline);
  RespConnection(const RespConnection&) = delete;
  RespConnection& operator=(const RespConnection&) = delete;

  // Sends one command (an array of bulk strings), all of it or nothing usable: after a failure the
  // connection must be dropped.
  IoResult send(std::span<const std::string_view> args, Deadline deadline);
  // Reads the next reply; a bulk string longer than `max_bulk` bytes is an error (nothing allocated).
  IoResult read_reply(Reply* reply, std::uint64_t max_bulk, Deadline deadline);
  // send() then read_reply().
  IoResult command(std::span<const std::string_view> args, Reply* reply, std::uint64_t max_bulk, Deadline deadline);

  // True when an idle connection has something to read or was closed by the server (it then cannot
  // be trusted for the next command). One poll() with a zero timeout.
  bool stale() const;

  pid_t owner_pid() const { return owner_pid_; }
  int fd() const { return fd_; }

 private:
  explicit RespConnection(int fd);

  // Waits until fd_ is ready for `events` or the deadline passes.
  IoResult wait_for(short events, Deadline deadline) const;
  // Receives at least one more byte into the input buffer.
  IoResult fill(Deadline deadline);
  // The next line (without CRLF) from the input buffer, receiving as needed; lines are capped.
  IoResult read_line(std::string* line, Deadline deadline);
  IoResult read_bulk(std::uint64_t length, std::string* out, Deadline deadline);
  // Receives at least one byte into buffer (*got >= 1), waiting as needed; *got == 0 when the
  // server closed the connection. Through TLS when started.
  IoResult receive(char* buffer, std::size_t length, std::size_t* got, Deadline deadline);
  // Sends from the iovecs (advancing them) until all are sent, through TLS when started.
  IoResult send_all(std::vector<struct iovec>& iov, Deadline deadline);
  IoResult send_pieces(std::vector<struct iovec>& iov, Deadline deadline);

  int fd_;
  pid_t owner_pid_;
  std::unique_ptr<TlsSession> tls_;  // destroyed before fd_ is closed
  std::vector<char> in_;             // received, not yet consumed: in_[in_begin_, in_end_)
  std::size_t in_begin_ = 0;
  std::size_t in_end_ = 0;
};

}  // namespace nvrtc_cache::store::remote::redis
