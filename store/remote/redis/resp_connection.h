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
// The socket, its deadlines, MSG_NOSIGNAL and TLS (start_tls(), rediss://) are a net::Stream's
// (store/remote/net/stream.h), shared with the HTTP tier.
// Contract: one thread at a time per connection; the descriptor is close-on-exec. fork: the child
// may close its copy (owner_pid() tells whose it is) and must not send on it; close() of a copy
// never disturbs the parent's connection (no shutdown()). Never throws (allocation failure aside);
// errno is not preserved here (the tier restores it).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/remote/net/stream.h"

namespace nvrtc_cache::store::remote::redis {

using net::Clock;
using net::Deadline;
using net::IoCode;
using net::IoResult;
using net::SocketAddress;
using net::TlsContext;

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
  static std::unique_ptr<RespConnection> adopt(platform::SocketHandle socket);
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

  pid_t owner_pid() const { return stream_->owner_pid(); }
  platform::SocketHandle fd() const { return stream_->fd(); }

 private:
  explicit RespConnection(std::unique_ptr<net::Stream> stream);

  // Receives at least one more byte into the input buffer.
  IoResult fill(Deadline deadline);
  // The next line (without CRLF) from the input buffer, receiving as needed; lines are capped.
  IoResult read_line(std::string* line, Deadline deadline);
  IoResult read_bulk(std::uint64_t length, std::string* out, Deadline deadline);

  std::unique_ptr<net::Stream> stream_;
  std::vector<char> in_;  // received, not yet consumed: in_[in_begin_, in_end_)
  std::size_t in_begin_ = 0;
  std::size_t in_end_ = 0;
};

}  // namespace nvrtc_cache::store::remote::redis
