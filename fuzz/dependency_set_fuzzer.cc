// DependencySet::decode on hostile bytes (it is not framed on its own: it sits inside a manifest).
#include "fuzz/fuzz_support.h"
#include "direct/dependencies.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache;
  const std::string_view input = fuzz::as_view(data, size);
  keying::ByteReader reader(input);
  keying::DependencySet set;
  if (!set.decode(reader)) return 0;
  const std::string_view consumed = input.substr(0, input.size() - reader.remaining());
  keying::ByteWriter w;
  set.encode(w);
  NVRTC_CACHE_FUZZ_CHECK(w.str() == consumed);  // the encoding is canonical
  keying::ByteReader again_reader(w.str());
  keying::DependencySet again;
  NVRTC_CACHE_FUZZ_CHECK(again.decode(again_reader) && again_reader.at_end());
  keying::ByteWriter identity;
  set.encode_identity(identity);
  return 0;
}
