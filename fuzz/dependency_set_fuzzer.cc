// DependencySet::decode on hostile bytes (it is not framed on its own: it sits inside a manifest).
#include "direct/dependencies.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache;
  const std::string_view input = fuzz::as_view(data, size);
  util::ByteReader reader(input);
  direct::DependencySet set;
  if (!set.decode(reader)) return 0;
  const std::string_view consumed = input.substr(0, input.size() - reader.remaining());
  util::ByteWriter w;
  set.encode(w);
  NVRTC_CACHE_FUZZ_CHECK(w.str() == consumed);  // the encoding is canonical
  util::ByteReader again_reader(w.str());
  direct::DependencySet again;
  NVRTC_CACHE_FUZZ_CHECK(again.decode(again_reader) && again_reader.at_end());
  util::ByteWriter identity;
  set.encode_identity(identity);
  return 0;
}
