// ResponseDecoder: one HTTP/1.1 response read from bytes as they arrive, through the packaged
// parser (Debian's libhttp-parser, linked in statically; the shim exports none of its symbols).
// Everything it is fed is untrusted: the body's size is checked against the caller's cap before
// anything is allocated for it (a Content-Length over the cap, or a chunked body that grows past
// it, is an error), header lines are bounded by the parser (80 KiB in all), and only the status,
// the body, Location and whether the connection may be kept are taken from it. Bytes after the
// end of the response (a server that sends more than it announced) make the connection unusable
// for another request (keep_alive() is then false). Informational (1xx) responses are skipped.
// Contract: one decoder per response, one thread at a time; no I/O, no global state; never throws
// (allocation failure aside). fuzz/http_response_fuzzer.cc feeds it arbitrary bytes.
#pragma once

#include <http_parser.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace nvrtc_cache::store::remote::http {

struct HttpResponse {
  unsigned status = 0;
  std::string body;
  std::string location;  // a redirect's Location header (printable, shortened), for messages
  bool keep_alive = false;
};

class ResponseDecoder {
 public:
  enum class State { kMore, kDone, kError };

  // `head`: the response to a HEAD request (no body follows its headers); `max_body`: the largest
  // body accepted.
  ResponseDecoder(bool head, std::uint64_t max_body);
  ResponseDecoder(const ResponseDecoder&) = delete;
  ResponseDecoder& operator=(const ResponseDecoder&) = delete;

  // Feeds the next bytes; kMore wants more, kDone has the response, kError says why in error().
  State feed(const char* data, std::size_t size);
  // The server closed the connection: kDone when that ends the response (a body read to the
  // close), else kError (a truncated response).
  State finish();

  HttpResponse& response() { return response_; }
  const std::string& error() const { return error_; }

 private:
  static int on_status(http_parser* parser, const char* at, std::size_t length);
  static int on_header_field(http_parser* parser, const char* at, std::size_t length);
  static int on_header_value(http_parser* parser, const char* at, std::size_t length);
  static int on_headers_complete(http_parser* parser);
  static int on_body(http_parser* parser, const char* at, std::size_t length);
  static int on_message_complete(http_parser* parser);
  State failed(std::string why);

  http_parser parser_{};
  http_parser_settings settings_{};
  bool head_;
  std::uint64_t max_body_;
  HttpResponse response_;
  std::string field_;  // the header name being read (lowercased, only its start)
  bool in_value_ = false;
  bool in_location_ = false;
  bool done_ = false;
  bool too_large_ = false;
  std::string error_;
};

}  // namespace nvrtc_cache::store::remote::http
