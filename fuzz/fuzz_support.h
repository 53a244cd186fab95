// Shared by the libFuzzer targets: the input as a string_view, a checksummed framing (the fuzzer
// plays a writer of the cache who recomputes checksums, so the decoder behind them is reached), and a
// check that aborts (a finding) when an invariant fails. Contract: fuzzing only; single-threaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "util/binary_io.h"

namespace nvrtc_cache::fuzz {

inline std::string_view as_view(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// `body` followed by its XXH3-64, as util::append_checksum frames every checksummed format.
inline std::string checksummed(std::string_view body) {
  util::ByteWriter w;
  w.raw(body);
  util::append_checksum(w);
  return std::move(w.str());
}

#define NVRTC_CACHE_FUZZ_CHECK(condition)                                                          \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #condition, __FILE__, __LINE__); \
      std::abort();                                                                                \
    }                                                                                              \
  } while (0)

}  // namespace nvrtc_cache::fuzz
