#include "util/binary_io.h"

#include <xxhash.h>

namespace nvrtc_cache::util {

void append_checksum(ByteWriter& w) { w.u64(XXH3_64bits(w.str().data(), w.str().size())); }

bool verify_checksummed(std::string_view framed, std::string_view& body) {
  if (framed.size() < 8) return false;
  body = framed.substr(0, framed.size() - 8);
  ByteReader trailer(framed.substr(framed.size() - 8));
  std::uint64_t stored = 0;
  return trailer.u64(stored) && stored == XXH3_64bits(body.data(), body.size());
}

}  // namespace nvrtc_cache::util
