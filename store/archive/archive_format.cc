#include "store/archive/archive_format.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include "util/binary_io.h"

namespace nvrtc_cache::store::archive {

std::array<char, kFramePrefixSize> frame_prefix(std::uint8_t type, std::uint32_t body_size) {
  std::array<char, kFramePrefixSize> prefix;
  prefix[0] = static_cast<char>(type);
  util::store_le(prefix.data() + 1, body_size, 4);
  return prefix;
}

std::uint64_t frame_checksum(std::uint8_t type, std::string_view body) {
  const auto prefix = frame_prefix(type, static_cast<std::uint32_t>(body.size()));
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, prefix.data(), prefix.size());
  XXH3_64bits_update(&state, body.data(), body.size());
  return XXH3_64bits_digest(&state);
}

}  // namespace nvrtc_cache::store::archive
