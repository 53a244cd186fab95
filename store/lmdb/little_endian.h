// Little-endian fixed-width integers, as the LMDB store writes its own records and as LMDB lays out
// its pages (store/lmdb/records.h, store/lmdb/page_layout.h).
// Contract: pure, no I/O, thread-safe; the caller guarantees the bytes exist (the decoders check sizes).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvrtc_cache::store {

// Writes `value` into out[0, 8).
inline void store_le64(char* out, std::uint64_t value) {
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xffu);
}

// Reads the unsigned integer in in[0, n), n <= 8.
inline std::uint64_t load_le(const char* in, std::size_t n) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < n; ++i) value |= std::uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return value;
}

}  // namespace nvrtc_cache::store
