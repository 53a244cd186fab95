// unwrap_value on hostile bytes: the first input byte picks how many of the following bytes are the
// key; the rest is the stored value. Whatever unwraps must wrap back to the same bytes, and any
// payload must round-trip through a fresh envelope.
#include "fuzz/fuzz_support.h"
#include "store/envelope.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache;
  if (size == 0) return 0;
  const std::string_view rest = fuzz::as_view(data + 1, size - 1);
  const std::string_view key = rest.substr(0, std::min<std::size_t>(data[0], rest.size()));
  const std::string_view stored = rest.substr(key.size());
  if (const auto payload = store::unwrap_value(key, stored)) {
    NVRTC_CACHE_FUZZ_CHECK(payload->size() == store::payload_size_of(stored.size()));
    NVRTC_CACHE_FUZZ_CHECK(store::wrap_value(key, *payload) == stored);
  }
  const std::string wrapped = store::wrap_value(key, stored);
  NVRTC_CACHE_FUZZ_CHECK(store::unwrap_value(key, wrapped) == stored);
  if (!key.empty()) NVRTC_CACHE_FUZZ_CHECK(!store::unwrap_value(key.substr(1), wrapped));  // another key
  return 0;
}
