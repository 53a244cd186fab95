// The HTTP tier's response decoder (store/remote/http/response_decoder.h) on hostile bytes, as a
// broken or malicious server would send them: the first input byte picks the body cap (2^(b % 24)
// bytes) and whether the request was a HEAD (bit 7); the rest arrives in pieces whose sizes the
// second byte varies (a response split anywhere across reads), then the connection closes. The body
// must respect the cap, a HEAD response has none, and a decoded response has a status.
#include <algorithm>

#include "fuzz/fuzz_support.h"
#include "store/remote/http/response_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using nvrtc_cache::store::remote::http::ResponseDecoder;
  if (size < 2) return 0;
  const std::uint64_t cap = std::uint64_t{1} << (data[0] % 24);
  const bool head = (data[0] & 0x80) != 0;
  const std::size_t piece = 1 + data[1] % 64;
  const std::string_view sent = nvrtc_cache::fuzz::as_view(data + 2, size - 2);
  ResponseDecoder decoder(head, cap);
  ResponseDecoder::State state = ResponseDecoder::State::kMore;
  for (std::size_t at = 0; at < sent.size() && state == ResponseDecoder::State::kMore; at += piece) {
    const std::string_view part = sent.substr(at, piece);
    state = decoder.feed(part.data(), part.size());
  }
  if (state == ResponseDecoder::State::kMore) state = decoder.finish();
  if (state == ResponseDecoder::State::kDone) {
    NVRTC_CACHE_FUZZ_CHECK(decoder.response().status >= 200 || decoder.response().status < 100);
    NVRTC_CACHE_FUZZ_CHECK(decoder.response().body.size() <= cap);
    if (head) NVRTC_CACHE_FUZZ_CHECK(decoder.response().body.empty());
  } else {
    NVRTC_CACHE_FUZZ_CHECK(state == ResponseDecoder::State::kError && !decoder.error().empty());
  }
  return 0;
}
