#include "store/remote/redis/resp_connection.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "store/remote/net/stream.h"

namespace nvrtc_cache::store::remote::redis {
namespace {

constexpr std::size_t kInputBufferSize = 64 * 1024;
// A status, error or length line longer than this is not RESP from a Redis server.
constexpr std::size_t kMaxLineLength = 16 * 1024;
// Arguments up to this size are copied next to their framing; larger ones are sent from the
// caller's memory through their own iovec.
constexpr std::size_t kInlineArgument = 4096;

IoResult failure(IoCode code, std::string detail) { return IoResult{code, std::move(detail)}; }

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

RespConnection::RespConnection(std::unique_ptr<net::Stream> stream)
    : stream_(std::move(stream)), in_(kInputBufferSize) {}

std::unique_ptr<RespConnection> RespConnection::adopt(platform::SocketHandle socket) {
  return std::unique_ptr<RespConnection>(new RespConnection(net::Stream::adopt(socket)));
}

RespConnection::~RespConnection() = default;

std::unique_ptr<RespConnection> RespConnection::connect(std::span<const SocketAddress> addresses, Deadline deadline,
                                                        IoResult* why) {
  auto stream = net::Stream::connect(addresses, deadline, why);
  if (stream == nullptr) return nullptr;
  return std::unique_ptr<RespConnection>(new RespConnection(std::move(stream)));
}

IoResult RespConnection::start_tls(std::shared_ptr<const TlsContext> context, const std::string& host,
                                   Deadline deadline) {
  return stream_->start_tls(std::move(context), host, deadline);
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

  return stream_->send_all(iov, deadline);
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
  if (IoResult received = stream_->receive(in_.data() + in_end_, in_.size() - in_end_, &got, deadline); !received.ok())
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
    if (IoResult received = stream_->receive(out->data() + have, out->size() - have, &got, deadline); !received.ok())
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
  const bool ready = stream_->stale();  // consumes a TLS session ticket first
  return in_begin_ != in_end_ || ready;
}

}  // namespace nvrtc_cache::store::remote::redis
