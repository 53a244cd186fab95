// decode_manifest (and through it DependencySet::decode) on hostile bytes, checksum recomputed.
#include "direct/manifest.h"
#include "fuzz/fuzz_support.h"

namespace nvrtc_cache::fuzz {
namespace {

void check(std::string_view framed) {
  const std::optional<direct::Manifest> decoded = direct::decode_manifest(framed);
  if (!decoded) return;
  NVRTC_CACHE_FUZZ_CHECK(decoded->results.size() <= direct::kMaxResultsPerManifest);
  const std::string encoded = direct::encode_manifest(*decoded);
  NVRTC_CACHE_FUZZ_CHECK(encoded == framed);
  const std::optional<direct::Manifest> again = direct::decode_manifest(encoded);
  NVRTC_CACHE_FUZZ_CHECK(again && direct::encode_manifest(*again) == encoded);
  for (const auto& result : decoded->results) (void)direct::result_key(keying::CacheKey{}, result.dependencies);
  direct::Manifest updated = *decoded;  // what a store does with it: add a result
  (void)updated.add({keying::CacheKey{0x5a}, {}});
  NVRTC_CACHE_FUZZ_CHECK(direct::decode_manifest(direct::encode_manifest(updated)).has_value());
}

}  // namespace
}  // namespace nvrtc_cache::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache::fuzz;
  const std::string_view input = as_view(data, size);
  check(input);
  check(checksummed(input));
  return 0;
}
