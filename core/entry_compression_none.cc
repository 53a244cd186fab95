// The Windows port's entry compression (core/entry_compression.h): none, it has no zstd. Entries are
// written uncompressed, and a compressed one (from a Linux writer's archive or shared tier) is a miss.
#include "core/entry_compression.h"

namespace nvrtc_cache::core {

bool is_compressed_entry(std::string_view stored) { return stored.starts_with("NVRZ"); }

std::string compress_entry(std::string encoded, int level) {
  (void)level;
  return encoded;
}

std::optional<std::string> expand_entry(std::string_view stored) {
  (void)stored;
  return std::nullopt;
}

}  // namespace nvrtc_cache::core
