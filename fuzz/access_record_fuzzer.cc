// decode_access and decode_le64 (the access, counters and meta records of the LMDB store).
#include "fuzz/fuzz_support.h"
#include "store/lmdb/records.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache;
  const std::string_view input = fuzz::as_view(data, size);
  if (const auto record = store::decode_access(input)) {
    char encoded[store::kAccessRecordSize];
    store::encode_access(*record, encoded);
    NVRTC_CACHE_FUZZ_CHECK(std::string_view(encoded, sizeof encoded) == input);
  } else {
    NVRTC_CACHE_FUZZ_CHECK(input.size() != store::kAccessRecordSize);
  }
  if (const auto number = store::decode_le64(input)) {
    char encoded[store::kCounterRecordSize];
    util::store_le(encoded, *number, 8);
    NVRTC_CACHE_FUZZ_CHECK(std::string_view(encoded, sizeof encoded) == input);
  }
  return 0;
}
