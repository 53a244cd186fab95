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

void begin_frame(ByteWriter& w, std::string_view magic, std::uint32_t version) {
  w.raw(magic);
  w.u32(version);
}

std::optional<ByteReader> open_frame(std::string_view framed, std::string_view magic, std::uint32_t version) {
  std::string_view body;
  if (framed.size() < magic.size() + kU32Bytes + kU64Bytes || !framed.starts_with(magic) ||
      !verify_checksummed(framed, body)) {
    return std::nullopt;
  }
  ByteReader r(body.substr(magic.size()));
  std::uint32_t stored_version = 0;
  if (!r.u32(stored_version) || stored_version != version) return std::nullopt;
  return r;
}

}  // namespace nvrtc_cache::util
