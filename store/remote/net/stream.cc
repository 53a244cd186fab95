#include "store/remote/net/stream.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "store/remote/net/tls_session.h"

namespace nvrtc_cache::store::remote::net {
namespace {

// Over TLS, a request up to this size goes out in one write (send_all()).
constexpr std::size_t kTlsCoalesce = 256 * 1024;

// Milliseconds until the deadline for poll(), rounded up; -1 when it has passed.
int poll_timeout_ms(Deadline deadline) {
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return -1;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<long long>(ms, 1 << 30));
}

}  // namespace

IoResult errno_failure(const char* what, int error) {
  if (error == EPIPE || error == ECONNRESET)
    return io_failure(IoCode::kError, std::string(what) + ": connection closed by the server");
  return io_failure(IoCode::kError, std::string(what) + ": " + std::strerror(error));
}

Stream::Stream(int fd) : fd_(fd), owner_pid_(getpid()) {}

std::unique_ptr<Stream> Stream::adopt(int fd) { return std::unique_ptr<Stream>(new Stream(fd)); }

Stream::~Stream() {
  // close() of this process's descriptor only: a parent's copy of the same socket stays connected.
  tls_.reset();
  if (fd_ >= 0) close(fd_);
}

IoResult Stream::start_tls(std::shared_ptr<const TlsContext> context, const std::string& host, Deadline deadline) {
  std::string problem;
  tls_ = TlsSession::create(std::move(context), fd_, host, &problem);
  if (tls_ == nullptr) return io_failure(IoCode::kError, problem);
  for (;;) {
    std::string detail;
    const TlsIo io = tls_->handshake(&detail);
    if (io == TlsIo::kDone) return {};
    if (io != TlsIo::kWantRead && io != TlsIo::kWantWrite) return io_failure(IoCode::kError, detail);
    if (IoResult waited = wait_for(io == TlsIo::kWantRead ? POLLIN : POLLOUT, deadline); !waited.ok()) {
      return waited.code == IoCode::kTimeout
                 ? io_failure(IoCode::kTimeout, "TLS handshake timed out (a frozen server, or not a TLS port?)")
                 : waited;
    }
  }
}

IoResult Stream::receive(char* buffer, std::size_t length, std::size_t* got, Deadline deadline) {
  *got = 0;
  for (;;) {
    if (tls_ != nullptr) {
      std::string detail;
      const TlsIo io = tls_->read(buffer, length, got, &detail);
      if (io == TlsIo::kDone || io == TlsIo::kClosed) return {};
      if (io == TlsIo::kError) return io_failure(IoCode::kError, detail);
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

IoResult Stream::send_all(std::vector<iovec>& iov, Deadline deadline) {
  // TLS has no scatter-gather: each piece would be a record of its own (a request's framing, its
  // body, its trailer). A request of up to kTlsCoalesce bytes is copied into one buffer and sent in
  // one write (measured with Redis: 8 KiB SETs 2.7x faster); a larger body is sent from the
  // caller's memory.
  std::string joined;
  std::vector<iovec> one;
  if (tls_ != nullptr && iov.size() > 1) {
    std::size_t total = 0;
    for (const iovec& piece : iov) total += piece.iov_len;
    if (total <= kTlsCoalesce) {
      joined.reserve(total);
      for (const iovec& piece : iov) joined.append(static_cast<const char*>(piece.iov_base), piece.iov_len);
      one.assign(1, iovec{joined.data(), joined.size()});
    }
  }
  std::vector<iovec>& pieces = one.empty() ? iov : one;
  return send_pieces(pieces, deadline);
}

IoResult Stream::send_pieces(std::vector<iovec>& iov, Deadline deadline) {
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
      if (io == TlsIo::kClosed) return io_failure(IoCode::kError, "send: connection closed by the server");
      if (io == TlsIo::kError) return io_failure(IoCode::kError, detail);
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

std::unique_ptr<Stream> Stream::connect(std::span<const SocketAddress> addresses, Deadline deadline, IoResult* why) {
  *why = io_failure(IoCode::kError, "no address to connect to");
  for (const SocketAddress& address : addresses) {
    const int family = address.storage.ss_family;
    const int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      *why = errno_failure("socket", errno);
      continue;
    }
    auto stream = std::unique_ptr<Stream>(new Stream(fd));
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
      return stream;
    }
    if (errno != EINPROGRESS) {
      *why = errno == EAGAIN ? io_failure(IoCode::kError, "connect: the server's listen queue is full")
                             : errno_failure("connect", errno);
      continue;
    }
    if (IoResult waited = stream->wait_for(POLLOUT, deadline); !waited.ok()) {
      *why = waited.code == IoCode::kTimeout ? io_failure(IoCode::kTimeout, "connect timed out") : waited;
      if (waited.code == IoCode::kTimeout) return nullptr;  // no time left for another address
      continue;
    }
    int error = 0;
    socklen_t length = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) < 0) error = errno;
    if (error == 0) {
      *why = {};
      return stream;
    }
    *why = errno_failure("connect", error);
  }
  return nullptr;
}

IoResult Stream::wait_for(short events, Deadline deadline) const {
  for (;;) {
    const int timeout = poll_timeout_ms(deadline);
    if (timeout < 0) return io_failure(IoCode::kTimeout, "timed out");
    pollfd p{fd_, events, 0};
    const int ready = poll(&p, 1, timeout);
    if (ready > 0) return {};  // ready, hung up or failed: the next send/recv says which
    if (ready < 0 && errno != EINTR) return errno_failure("poll", errno);
  }
}

bool Stream::stale() const {
  pollfd p{fd_, POLLIN, 0};
  int ready;
  do {
    ready = poll(&p, 1, 0);
  } while (ready < 0 && errno == EINTR);
  if (ready > 0 && tls_ != nullptr && (p.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0)
    return tls_->readable_means_stale();  // a TLS 1.3 session ticket is not a stale connection
  return ready != 0;
}

}  // namespace nvrtc_cache::store::remote::net
