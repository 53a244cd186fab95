// decode_manifest (and through it DependencySet::decode) on hostile bytes, checksum recomputed.
#include "fuzz/fuzz_support.h"
#include "direct/manifest.h"

namespace nvrtc_cache::fuzz {
namespace {

void check(std::string_view framed) {
  const std::optional<keying::Manifest> decoded = keying::decode_manifest(framed);
  if (!decoded) return;
  NVRTC_CACHE_FUZZ_CHECK(decoded->results.size() <= keying::kMaxResultsPerManifest);
  const std::string encoded = keying::encode_manifest(*decoded);
  NVRTC_CACHE_FUZZ_CHECK(encoded == framed);
  const std::optional<keying::Manifest> again = keying::decode_manifest(encoded);
  NVRTC_CACHE_FUZZ_CHECK(again && keying::encode_manifest(*again) == encoded);
  for (const auto& result : decoded->results) (void)keying::result_key(keying::CacheKey{}, result.dependencies);
  keying::Manifest updated = *decoded;  // what a store does with it: add a result
  (void)updated.add({keying::CacheKey{0x5a}, {}});
  NVRTC_CACHE_FUZZ_CHECK(keying::decode_manifest(keying::encode_manifest(updated)).has_value());
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
