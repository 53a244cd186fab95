// ResponseDecoder: one HTTP/1.1 response read from bytes as they arrive, through the packaged
// parser (Debian's libhttp-parser, linked in statically; the shim exports none of its symbols).
// Everything it is fed is untrusted, and every part of a response is bounded in bytes from its
// first byte (the caller bounds it in time: one deadline for the whole exchange):
// - the body: a Content-Length or a chunk size that would take it past the caller's cap is an
//   error before a byte of it is stored, and its buffer never grows past the cap (a chunked body
//   past 1 MiB gets the cap reserved once: untouched pages cost no memory, and no doubling copy
//   ever holds twice the body);
// - informational (1xx) responses: skipped, at most kMaxInterim of them;
// - header lines: the parser's limit (80 KiB for a response's head, again for its trailers), and
//   at most kMaxHeaderLines lines in all (interim responses, the head and the trailers);
// - framing (every byte that is not the body: status lines, headers, chunk-size lines, chunk
//   extensions, trailers): at most kMaxFraming bytes plus 1/16 of the body read so far, so chunk
//   extensions or one-byte chunks cannot make it read without end.
// Only the status, the body, Location and whether the connection may be kept are taken from it.
// Bytes after the end of the response (a server that sends more than it announced) make the
// connection unusable for another request (keep_alive() is then false).
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

  static constexpr int kMaxInterim = 16;
  static constexpr int kMaxHeaderLines = 256;
  static constexpr std::uint64_t kMaxFraming = 256 * 1024;

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
  static int on_chunk_header(http_parser* parser);
  static int on_body(http_parser* parser, const char* at, std::size_t length);
  static int on_message_complete(http_parser* parser);
  State failed(std::string why);
  // Makes room for `more` body bytes (the cap was checked); see the contract above.
  void reserve_body(std::uint64_t more);

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
  const char* limit_ = nullptr;  // the bound a response broke, other than the body's
  int interim_ = 0;              // 1xx responses read
  int header_lines_ = 0;         // header lines read, trailers and interim responses' included
  std::uint64_t body_read_ = 0;  // body bytes of this call of feed() (the rest is framing)
  std::uint64_t framing_ = 0;    // bytes fed that were not body
  std::string error_;
};

}  // namespace nvrtc_cache::store::remote::http
