// decode_handle_entry on hostile bytes (checksum recomputed), then what the shim's getters would copy
// into a host's buffers: a host allocates the size the size getter reported, plus what the library
// itself writes past it (a NUL past an empty log), never more than kMaxBytesPastSize.
#include <cstring>
#include <memory>

#include "core/handle_entry.h"
#include "fuzz/fuzz_support.h"

namespace nvrtc_cache::fuzz {
namespace {

void check(std::string_view framed) {
  const std::optional<core::HandleEntry> decoded = core::decode_handle_entry(framed);
  if (!decoded) return;
  NVRTC_CACHE_FUZZ_CHECK(core::is_well_formed(*decoded));
  NVRTC_CACHE_FUZZ_CHECK(decoded->outputs.size() == core::outputs_of(decoded->library).size());
  const std::string encoded = core::encode_handle_entry(*decoded);
  NVRTC_CACHE_FUZZ_CHECK(encoded == framed);  // the encoding is canonical
  for (const core::RecordedOutput& o : decoded->outputs) {
    if (!o.available || o.data_rc != 0) continue;
    NVRTC_CACHE_FUZZ_CHECK(o.size_written && o.bytes.size() >= o.size);
    const std::size_t allocated = o.size + core::kMaxBytesPastSize;
    const std::unique_ptr<char[]> host(new char[allocated]);
    NVRTC_CACHE_FUZZ_CHECK(o.bytes.size() < allocated);
    std::memcpy(host.get(), o.bytes.data(), o.bytes.size());
  }
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
