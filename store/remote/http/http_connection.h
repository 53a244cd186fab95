// HttpConnection: one keep-alive HTTP/1.1 connection to the tier's server (a net::Stream: deadlines
// on every wait, MSG_NOSIGNAL, TLS for https://) and the requests the HTTP tier makes on it: GET,
// HEAD, PUT and DELETE of one entry. A request goes out as its head and, for PUT, the body from the
// caller's memory; the response is read through a ResponseDecoder (store/remote/http/
// response_decoder.h), bounded by the caller's cap on the body. Redirects are not followed (the
// tier reports them).
// Contract: one thread at a time per connection; the descriptor is close-on-exec. fork: as
// net::Stream (owner_pid() tells whose it is). Never throws (allocation failure aside); errno is
// not preserved here (the tier restores it). A connection whose exchange failed, or whose response
// did not allow keep-alive (reusable() is false), must be dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "store/remote/http/response_decoder.h"
#include "store/remote/net/stream.h"

namespace nvrtc_cache::store::remote::http {

using net::Deadline;
using net::IoCode;
using net::IoResult;

struct HttpRequest {
  std::string_view method;  // "GET", "HEAD", "PUT", "DELETE"
  std::string_view target;  // the path
  std::string_view host;    // the Host header (with ":port" when not the default)
  std::string_view authorization;
  std::string_view body;  // PUT
};

class HttpConnection {
 public:
  // Connects to the first address that answers before `deadline`; nullptr with *why set otherwise.
  static std::unique_ptr<HttpConnection> connect(std::span<const net::SocketAddress> addresses, Deadline deadline,
                                                 IoResult* why);
  // The TLS handshake for `host` (https://), before `deadline`.
  IoResult start_tls(std::shared_ptr<const net::TlsContext> context, const std::string& host, Deadline deadline);

  // Sends `request` and reads its response into *response (a body of at most `max_body` bytes).
  // *received tells whether any byte of a response arrived (a pooled connection that failed
  // before one may be retried on a new connection).
  IoResult exchange(const HttpRequest& request, std::uint64_t max_body, Deadline deadline, HttpResponse* response,
                    bool* received);

  // Whether the last response allows another request on this connection.
  bool reusable() const { return reusable_; }
  bool stale() const { return stream_->stale(); }
  pid_t owner_pid() const { return stream_->owner_pid(); }

 private:
  explicit HttpConnection(std::unique_ptr<net::Stream> stream) : stream_(std::move(stream)) {}
  std::unique_ptr<net::Stream> stream_;
  bool reusable_ = false;
};

}  // namespace nvrtc_cache::store::remote::http
