#include "store/remote/redis/resp_connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "store/remote/redis/tls_session.h"

namespace nvrtc_cache::store::remote::redis {
namespace {

constexpr std::size_t kInputBufferSize = 64 * 1024;
// A status, error or length line longer than this is not RESP from a Redis server.
constexpr std::size_t kMaxLineLength = 16 * 1024;
// Arguments up to this size are copied next to their framing; larger ones are sent from the
// caller's memory through their own iovec.
constexpr std::size_t kInlineArgument = 4096;
// Over TLS, a command up to this size goes out in one write (send_all()).
constexpr std::size_t kTlsCoalesce = 256 * 1024;

IoResult failure(IoCode code, std::string detail) { return IoResult{code, std::move(detail)}; }

IoResult errno_failure(const char* what, int error) {
  if (error == EPIPE || error == ECONNRESET)
    return failure(IoCode::kError, std::string(what) + ": connection closed by the server");
  return failure(IoCode::kError, std::string(what) + ": " + std::strerror(error));
}

// Milliseconds until the deadline for poll(), rounded up; -1 when it has passed.
int poll_timeout_ms(Deadline deadline) {
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return -1;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<long long>(ms, 1 << 30));
}

// Appends "<marker><n>\r\n".
void append_length(std::string& out, char marker, std::size_t n) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
  (void)ec;
  out.push_back(marker);
  out.append(digits, end);
  out.append("\r\n");
}

bool parse_integer(std::string_view text, long long* value) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 160)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  if (text.size() > 160) out += "...";
  return out;
}

RespConnection::RespConnection(int fd) : fd_(fd), owner_pid_(getpid()), in_(kInputBufferSize) {}

std::unique_ptr<RespConnection> RespConnection::adopt(int fd) {
  return std::unique_ptr<RespConnection>(new RespConnection(fd));
}

RespConnection::~RespConnection() {
  // close() of this process's descriptor only: a parent's copy of the same socket stays connected.
  tls_.reset();
  if (fd_ >= 0) close(fd_);
}

IoResult RespConnection::start_tls(std::shared_ptr<const TlsContext> context, const std::string& host,
                                   Deadline deadline) {
  std::string problem;
  tls_ = TlsSession::create(std::move(context), fd_, host, &problem);
  if (tls_ == nullptr) return failure(IoCode::kError, problem);
  for (;;) {
    std::string detail;
    const TlsIo io = tls_->handshake(&detail);
    if (io == TlsIo::kDone) return {};
    if (io != TlsIo::kWantRead && io != TlsIo::kWantWrite) return failure(IoCode::kError, detail);
    if (IoResult waited = wait_for(io == TlsIo::kWantRead ? POLLIN : POLLOUT, deadline); !waited.ok()) {
      return waited.code == IoCode::kTimeout
                 ? failure(IoCode::kTimeout, "TLS handshake timed out (a frozen server, or not a TLS port?)")
                 : waited;
    }
  }
}

IoResult RespConnection::receive(char* buffer, std::size_t length, std::size_t* got, Deadline deadline) {
  *got = 0;
  for (;;) {
    if (tls_ != nullptr) {
      std::string detail;
      const TlsIo io = tls_->read(buffer, length, got, &detail);
      if (io == TlsIo::kDone || io == TlsIo::kClosed) return {};
      if (io == TlsIo::kError) return failure(IoCode::kError, detail);
      if (IoResult waited = wait_for(io == TlsIo::kWantRead ? POLLIN : POLLOUT, deadline); !waited.ok()) return waited;
      continue;
    }
    const ssize_t n = recv(fd_, buffer, length, MSG_DONTWAIT);
    if (n >= 0) {
      *got = static_cast<std::size_t>(n);
      return {};
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return errno_failure("recv", errno);
    if (IoResult waited = wait_for(POLLIN, deadline); !waited.ok()) return waited;
  }
}

IoResult RespConnection::send_all(std::vector<iovec>& iov, Deadline deadline) {
  // TLS has no scatter-gather: each piece would be a record of its own (the framing of a SET, its
  // value, its CRLF). A command of up to kTlsCoalesce bytes is copied into one buffer and sent in
  // one write (measured: 8 KiB SETs 2.7x faster); a larger value is sent from the caller's memory.
  std::string joined;
  iovec whole{};
  std::vector<iovec> one;
  if (tls_ != nullptr && iov.size() > 1) {
    std::size_t total = 0;
    for (const iovec& piece : iov) total += piece.iov_len;
    if (total <= kTlsCoalesce) {
      joined.reserve(total);
      for (const iovec& piece : iov) joined.append(static_cast<const char*>(piece.iov_base), piece.iov_len);
      whole = {joined.data(), joined.size()};
      one.assign(1, whole);
    }
  }
  std::vector<iovec>& pieces = one.empty() ? iov : one;
  return send_pieces(pieces, deadline);
}

IoResult RespConnection::send_pieces(std::vector<iovec>& iov, Deadline deadline) {
  std::size_t first = 0;
  while (first < iov.size()) {
    std::size_t sent = 0;
    if (tls_ != nullptr) {
      if (iov[first].iov_len == 0) {
        ++first;
        continue;
      }
      std::string detail;
      const TlsIo io = tls_->write(static_cast<const char*>(iov[first].iov_base), iov[first].iov_len, &sent, &detail);
      if (io == TlsIo::kClosed) return failure(IoCode::kError, "send: connection closed by the server");
      if (io == TlsIo::kError) return failure(IoCode::kError, detail);
      if (io != TlsIo::kDone) {
        if (IoResult waited = wait_for(io == TlsIo::kWantRead ? POLLIN : POLLOUT, deadline); !waited.ok())
          return waited;
        continue;
      }
    } else {
      msghdr message{};
      message.msg_iov = iov.data() + first;
      message.msg_iovlen = std::min<std::size_t>(iov.size() - first, 1024);
      const ssize_t n = sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          if (IoResult waited = wait_for(POLLOUT, deadline); !waited.ok()) return waited;
          continue;
        }
        return errno_failure("send", errno);
      }
      sent = static_cast<std::size_t>(n);
    }
    std::size_t left = sent;
    while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (left > 0) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return {};
}

std::unique_ptr<RespConnection> RespConnection::connect(std::span<const SocketAddress> addresses, Deadline deadline,
                                                        IoResult* why) {
  *why = failure(IoCode::kError, "no address to connect to");
  for (const SocketAddress& address : addresses) {
    const int family = address.storage.ss_family;
    const int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      *why = errno_failure("socket", errno);
      continue;
    }
    auto connection = std::unique_ptr<RespConnection>(new RespConnection(fd));
    if (family == AF_INET || family == AF_INET6) {
      const int on = 1;
      (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    int rc;
    do {
      rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address.storage), address.length);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) {
      *why = {};
      return connection;
    }
    if (errno != EINPROGRESS) {
      *why = errno == EAGAIN ? failure(IoCode::kError, "connect: the server's listen queue is full")
                             : errno_failure("connect", errno);
      continue;
    }
    if (IoResult waited = connection->wait_for(POLLOUT, deadline); !waited.ok()) {
      *why = waited.code == IoCode::kTimeout ? failure(IoCode::kTimeout, "connect timed out") : waited;
      if (waited.code == IoCode::kTimeout) return nullptr;  // no time left for another address
      continue;
    }
    int error = 0;
    socklen_t length = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) < 0) error = errno;
    if (error == 0) {
      *why = {};
      return connection;
    }
    *why = errno_failure("connect", error);
  }
  return nullptr;
}

IoResult RespConnection::wait_for(short events, Deadline deadline) const {
  for (;;) {
    const int timeout = poll_timeout_ms(deadline);
    if (timeout < 0) return failure(IoCode::kTimeout, "timed out");
    pollfd p{fd_, events, 0};
    const int ready = poll(&p, 1, timeout);
    if (ready > 0) return {};  // ready, hung up or failed: the next send/recv says which
    if (ready < 0 && errno != EINTR) return errno_failure("poll", errno);
  }
}

IoResult RespConnection::send(std::span<const std::string_view> args, Deadline deadline) {
  // Framing (and small arguments) in one buffer; large arguments referenced where they are. The
  // buffer is sized first so that the iovecs pointing into it stay valid.
  std::size_t framing_size = 24;
  for (std::string_view arg : args) framing_size += 24 + (arg.size() <= kInlineArgument ? arg.size() : 0);
  std::string framing;
  framing.reserve(framing_size);
  struct Piece {
    bool in_framing;
    std::size_t offset;  // in framing, or index of the argument
    std::size_t length;
  };
  std::vector<Piece> pieces;
  pieces.reserve(args.size() * 2 + 1);
  auto add_framing = [&](auto&& write) {
    const std::size_t begin = framing.size();
    write();
    if (!pieces.empty() && pieces.back().in_framing) {
      pieces.back().length += framing.size() - begin;
    } else {
      pieces.push_back({true, begin, framing.size() - begin});
    }
  };
  add_framing([&] { append_length(framing, '*', args.size()); });
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg.size() <= kInlineArgument) {
      add_framing([&] {
        append_length(framing, '$', arg.size());
        framing.append(arg);
        framing.append("\r\n");
      });
    } else {
      add_framing([&] { append_length(framing, '$', arg.size()); });
      pieces.push_back({false, i, arg.size()});
      add_framing([&] { framing.append("\r\n"); });
    }
  }
  std::vector<iovec> iov;
  iov.reserve(pieces.size());
  for (const Piece& piece : pieces) {
    const char* base = piece.in_framing ? framing.data() + piece.offset : args[piece.offset].data();
    iov.push_back({const_cast<char*>(base), piece.length});
  }

  return send_all(iov, deadline);
}

IoResult RespConnection::fill(Deadline deadline) {
  if (in_begin_ == in_end_) in_begin_ = in_end_ = 0;
  if (in_end_ == in_.size()) {  // make room: move the unread bytes to the front
    std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    in_begin_ = 0;
    if (in_end_ == in_.size()) return failure(IoCode::kError, "reply line too long: not a Redis server?");
  }
  std::size_t got = 0;
  if (IoResult received = receive(in_.data() + in_end_, in_.size() - in_end_, &got, deadline); !received.ok())
    return received;
  if (got == 0) return failure(IoCode::kError, "connection closed by the server");
  in_end_ += got;
  return {};
}

IoResult RespConnection::read_line(std::string* line, Deadline deadline) {
  std::size_t scanned = in_begin_;
  for (;;) {
    const char* begin = in_.data() + in_begin_;
    const char* end = in_.data() + in_end_;
    const char* from = in_.data() + std::max(scanned, in_begin_);
    if (const void* cr = std::memchr(from, '\r', static_cast<std::size_t>(end - from))) {
      const char* at = static_cast<const char*>(cr);
      if (at + 1 < end) {
        if (at[1] != '\n') return failure(IoCode::kError, "malformed reply (CR without LF): not a Redis server?");
        line->assign(begin, at);
        in_begin_ += static_cast<std::size_t>(at + 2 - begin);
        return {};
      }
      scanned = static_cast<std::size_t>(at - in_.data());  // the LF has not arrived yet
    } else {
      scanned = in_end_;
    }
    if (in_end_ - in_begin_ > kMaxLineLength)
      return failure(IoCode::kError, "reply line too long: not a Redis server?");
    const std::size_t offset = scanned - in_begin_;
    if (IoResult filled = fill(deadline); !filled.ok()) return filled;
    scanned = in_begin_ + offset;  // fill() may have moved the unread bytes to the front
  }
}

IoResult RespConnection::read_bulk(std::uint64_t length, std::string* out, Deadline deadline) {
  out->clear();
  out->resize(static_cast<std::size_t>(length));
  std::size_t have = std::min<std::size_t>(out->size(), in_end_ - in_begin_);
  std::memcpy(out->data(), in_.data() + in_begin_, have);
  in_begin_ += have;
  while (have < out->size()) {  // the rest straight into the string, no staging copy
    std::size_t got = 0;
    if (IoResult received = receive(out->data() + have, out->size() - have, &got, deadline); !received.ok())
      return received;
    if (got == 0) return failure(IoCode::kError, "connection closed by the server in the middle of a reply");
    have += got;
  }
  while (in_end_ - in_begin_ < 2) {
    if (IoResult filled = fill(deadline); !filled.ok()) return filled;
  }
  if (in_[in_begin_] != '\r' || in_[in_begin_ + 1] != '\n')
    return failure(IoCode::kError, "malformed bulk reply: not a Redis server?");
  in_begin_ += 2;
  return {};
}

IoResult RespConnection::read_reply(Reply* reply, std::uint64_t max_bulk, Deadline deadline) {
  std::string line;
  if (IoResult got = read_line(&line, deadline); !got.ok()) return got;
  if (line.empty()) return failure(IoCode::kError, "empty reply line: not a Redis server?");
  const std::string_view rest = std::string_view(line).substr(1);
  switch (line[0]) {
    case '+':
      reply->kind = Reply::Kind::kStatus;
      reply->text.assign(rest);
      return {};
    case '-':
      reply->kind = Reply::Kind::kError;
      reply->text.assign(rest);
      return {};
    case ':':
      reply->kind = Reply::Kind::kInteger;
      if (!parse_integer(rest, &reply->integer))
        return failure(IoCode::kError, "malformed integer reply: not a Redis server?");
      return {};
    case '$': {
      long long length = 0;
      if (!parse_integer(rest, &length) || length < -1)
        return failure(IoCode::kError, "malformed bulk length: not a Redis server?");
      if (length == -1) {
        reply->kind = Reply::Kind::kNil;
        reply->text.clear();
        return {};
      }
      if (static_cast<std::uint64_t>(length) > max_bulk) {
        return failure(IoCode::kError, "reply of " + std::to_string(length) + " bytes is larger than the limit of " +
                                           std::to_string(max_bulk));
      }
      reply->kind = Reply::Kind::kBulk;
      return read_bulk(static_cast<std::uint64_t>(length), &reply->text, deadline);
    }
    case '*':
      return failure(IoCode::kError, "unexpected array reply");
    default:
      return failure(IoCode::kError,
                     "not a RESP reply (\"" + printable(line.substr(0, 16)) + "\"): not a Redis server?");
  }
}

IoResult RespConnection::command(std::span<const std::string_view> args, Reply* reply, std::uint64_t max_bulk,
                                 Deadline deadline) {
  if (IoResult sent = send(args, deadline); !sent.ok()) return sent;
  return read_reply(reply, max_bulk, deadline);
}

bool RespConnection::stale() const {
  pollfd p{fd_, POLLIN, 0};
  int ready;
  do {
    ready = poll(&p, 1, 0);
  } while (ready < 0 && errno == EINTR);
  if (in_begin_ != in_end_) return true;
  if (ready > 0 && tls_ != nullptr && (p.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0)
    return tls_->readable_means_stale();  // a TLS 1.3 session ticket is not a stale connection
  return ready != 0;
}

}  // namespace nvrtc_cache::store::remote::redis
