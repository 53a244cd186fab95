#include "store/remote/http/http_connection.h"

#include <vector>

namespace nvrtc_cache::store::remote::http {
namespace {

constexpr std::size_t kReceiveBuffer = 64 * 1024;

}  // namespace

std::unique_ptr<HttpConnection> HttpConnection::connect(std::span<const net::SocketAddress> addresses,
                                                        Deadline deadline, IoResult* why) {
  auto stream = net::Stream::connect(addresses, deadline, why);
  if (stream == nullptr) return nullptr;
  return std::unique_ptr<HttpConnection>(new HttpConnection(std::move(stream)));
}

IoResult HttpConnection::start_tls(std::shared_ptr<const net::TlsContext> context, const std::string& host,
                                   Deadline deadline) {
  return stream_->start_tls(std::move(context), host, deadline);
}

IoResult HttpConnection::exchange(const HttpRequest& request, std::uint64_t max_body, Deadline deadline,
                                  HttpResponse* response, bool* received) {
  *received = false;
  reusable_ = false;
  std::string head;
  head.reserve(256 + request.target.size() + request.authorization.size());
  head.append(request.method).append(" ").append(request.target).append(" HTTP/1.1\r\nHost: ");
  head.append(request.host).append("\r\nUser-Agent: nvrtc-cache\r\n");
  if (!request.authorization.empty()) head.append("Authorization: ").append(request.authorization).append("\r\n");
  if (request.method == "PUT") {
    head.append("Content-Type: application/octet-stream\r\nContent-Length: ")
        .append(std::to_string(request.body.size()))
        .append("\r\n");
  }
  head.append("\r\n");
  std::vector<iovec> iov{{head.data(), head.size()}};
  if (!request.body.empty()) iov.push_back({const_cast<char*>(request.body.data()), request.body.size()});
  if (IoResult sent = stream_->send_all(iov, deadline); !sent.ok()) return sent;

  ResponseDecoder decoder(request.method == "HEAD", max_body);
  std::vector<char> buffer(kReceiveBuffer);
  for (;;) {
    std::size_t got = 0;
    if (IoResult r = stream_->receive(buffer.data(), buffer.size(), &got, deadline); !r.ok()) {
      if (r.code == IoCode::kTimeout)
        r.detail = *received ? "the response did not arrive in time" : "no response in time";
      return r;
    }
    ResponseDecoder::State state;
    if (got == 0) {
      state = decoder.finish();
    } else {
      *received = true;
      state = decoder.feed(buffer.data(), got);
    }
    if (state == ResponseDecoder::State::kError) return net::io_failure(IoCode::kError, decoder.error());
    if (state == ResponseDecoder::State::kDone) {
      *response = std::move(decoder.response());
      reusable_ = response->keep_alive && got != 0;
      return {};
    }
  }
}

}  // namespace nvrtc_cache::store::remote::http
