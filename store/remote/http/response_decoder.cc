#include "store/remote/http/response_decoder.h"

#include <algorithm>
#include <climits>

namespace nvrtc_cache::store::remote::http {
namespace {

constexpr std::size_t kMaxLocation = 160;
// A body's buffer doubles up to this size; past it the cap is reserved at once: the pages not
// written stay virtual, and one move instead of doubling keeps the peak at the cap (doubling to a
// 64 MiB cap peaks at +128 MiB, old and new buffers side by side: measured).
constexpr std::uint64_t kGrowByDoubling = 1024 * 1024;

ResponseDecoder* self(http_parser* parser) { return static_cast<ResponseDecoder*>(parser->data); }

}  // namespace

ResponseDecoder::ResponseDecoder(bool head, std::uint64_t max_body) : head_(head), max_body_(max_body) {
  http_parser_init(&parser_, HTTP_RESPONSE);
  parser_.data = this;
  http_parser_settings_init(&settings_);
  settings_.on_status = on_status;
  settings_.on_header_field = on_header_field;
  settings_.on_header_value = on_header_value;
  settings_.on_headers_complete = on_headers_complete;
  settings_.on_chunk_header = on_chunk_header;
  settings_.on_body = on_body;
  settings_.on_message_complete = on_message_complete;
}

int ResponseDecoder::on_status(http_parser*, const char*, std::size_t) { return 0; }

// The parser may call back with a field or a value in pieces; a value's first piece ends its field.
int ResponseDecoder::on_header_field(http_parser* parser, const char* at, std::size_t length) {
  ResponseDecoder& d = *self(parser);
  if (d.in_value_ || d.field_.empty()) {  // a new header line (a name's first piece)
    if (++d.header_lines_ > kMaxHeaderLines) {
      d.limit_ = "more header lines than the limit";
      return 1;
    }
  }
  if (d.in_value_) {
    d.in_value_ = false;
    d.in_location_ = false;
    d.field_.clear();
  }
  for (std::size_t i = 0; i < length && d.field_.size() <= 16; ++i) {  // only short names are read
    const char c = at[i];
    d.field_.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return 0;
}

int ResponseDecoder::on_header_value(http_parser* parser, const char* at, std::size_t length) {
  ResponseDecoder& d = *self(parser);
  if (!d.in_value_) {
    d.in_value_ = true;
    d.in_location_ = d.field_ == "location";
  }
  if (!d.in_location_) return 0;
  std::string& location = d.response_.location;
  for (std::size_t i = 0; i < length && location.size() < kMaxLocation; ++i)
    location.push_back(at[i] >= 0x20 && at[i] < 0x7f ? at[i] : '?');
  return 0;
}

int ResponseDecoder::on_headers_complete(http_parser* parser) {
  ResponseDecoder& d = *self(parser);
  d.in_value_ = false;
  d.in_location_ = false;
  d.field_.clear();
  d.response_.status = parser->status_code;
  if (parser->status_code >= 100 && parser->status_code < 200) return 0;  // no body; the real response follows
  if (d.head_) return 1;                                                  // a HEAD response has no body
  // http-parser leaves content_length at ULLONG_MAX when the response announces none.
  if (parser->content_length != ULLONG_MAX) {
    if (parser->content_length > d.max_body_) {
      d.too_large_ = true;
      return 3;  // an error: stop before the body
    }
    d.response_.body.reserve(static_cast<std::size_t>(parser->content_length));
  }
  return 0;
}

// A chunk's size is known before its bytes: one that would take the body past the cap is refused.
int ResponseDecoder::on_chunk_header(http_parser* parser) {
  ResponseDecoder& d = *self(parser);
  if (parser->content_length > d.max_body_ - d.response_.body.size()) {
    d.too_large_ = true;
    return 1;
  }
  d.reserve_body(parser->content_length);
  return 0;
}

int ResponseDecoder::on_body(http_parser* parser, const char* at, std::size_t length) {
  ResponseDecoder& d = *self(parser);
  if (length > d.max_body_ - d.response_.body.size()) {
    d.too_large_ = true;
    return 1;
  }
  d.reserve_body(length);
  d.response_.body.append(at, length);
  d.body_read_ += length;
  return 0;
}

void ResponseDecoder::reserve_body(std::uint64_t more) {
  std::string& body = response_.body;
  const std::uint64_t needed = body.size() + more;  // at most max_body_: the callers checked
  if (needed <= body.capacity()) return;
  std::uint64_t target = std::max<std::uint64_t>(needed, 2 * static_cast<std::uint64_t>(body.capacity()));
  if (target > kGrowByDoubling) target = max_body_;
  body.reserve(static_cast<std::size_t>(std::min(target, max_body_)));
}

int ResponseDecoder::on_message_complete(http_parser* parser) {
  ResponseDecoder& d = *self(parser);
  if (parser->status_code >= 100 && parser->status_code < 200) {
    d.response_ = HttpResponse{};  // an interim response: read on
    if (++d.interim_ > kMaxInterim) {
      d.limit_ = "more informational (1xx) responses than the limit";
      return 1;
    }
    return 0;
  }
  d.done_ = true;
  d.response_.keep_alive = http_should_keep_alive(parser) != 0;
  http_parser_pause(parser, 1);  // anything after this response is not read as another
  return 0;
}

ResponseDecoder::State ResponseDecoder::failed(std::string why) {
  error_ = std::move(why);
  return State::kError;
}

ResponseDecoder::State ResponseDecoder::feed(const char* data, std::size_t size) {
  if (done_) {
    if (size > 0) response_.keep_alive = false;  // more than the response: the connection is not reused
    return State::kDone;
  }
  body_read_ = 0;
  const std::size_t parsed = http_parser_execute(&parser_, &settings_, data, size);
  if (done_) {
    if (parsed < size) response_.keep_alive = false;
    return State::kDone;
  }
  const http_errno error = HTTP_PARSER_ERRNO(&parser_);
  if (too_large_)
    return failed("the response body is larger than the limit of " + std::to_string(max_body_) + " bytes");
  if (limit_ != nullptr) return failed(std::string("malformed HTTP response (") + limit_ + ")");
  framing_ += parsed - body_read_;
  if (framing_ > kMaxFraming + response_.body.size() / 16)
    return failed("malformed HTTP response (more framing than the limit: headers, chunk lines, extensions)");
  if (error != HPE_OK) return failed(std::string("malformed HTTP response (") + http_errno_description(error) + ")");
  return State::kMore;
}

ResponseDecoder::State ResponseDecoder::finish() {
  if (done_) return State::kDone;
  if (HTTP_PARSER_ERRNO(&parser_) == HPE_OK) (void)http_parser_execute(&parser_, &settings_, nullptr, 0);
  if (done_) {
    response_.keep_alive = false;  // the body ended with the connection
    return State::kDone;
  }
  if (response_.status == 0) return failed("connection closed by the server before a response");
  return failed("connection closed by the server in the middle of the response (truncated)");
}

}  // namespace nvrtc_cache::store::remote::http
