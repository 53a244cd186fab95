// decode_api_entry on hostile bytes (a store's, a shared tier's, an import's): whatever decodes lies
// inside the input, re-encodes to the same bytes, and answers value_for_key only for its own key.
#include "api/api_entry.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache;
  const std::string_view input = fuzz::as_view(data, size);
  const std::optional<api::ApiEntryView> entry = api::decode_api_entry(input);
  if (!entry) return 0;
  NVRTC_CACHE_FUZZ_CHECK(entry->key.data() >= input.data() &&
                         entry->value.data() + entry->value.size() == input.data() + input.size());
  NVRTC_CACHE_FUZZ_CHECK(api::encode_api_entry(entry->key, entry->value) == input);
  NVRTC_CACHE_FUZZ_CHECK(api::value_for_key(input, entry->key) == entry->value);
  const std::string other = std::string(entry->key) + "x";
  NVRTC_CACHE_FUZZ_CHECK(!api::value_for_key(input, other));
  NVRTC_CACHE_FUZZ_CHECK(api::is_api_store_key(api::api_store_key(entry->key)));
  return 0;
}
