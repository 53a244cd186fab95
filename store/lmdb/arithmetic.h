// Arithmetic on numbers the LMDB store reads back (sizes, times, counters): every input may be
// anything another process or a damaged disk left, so these saturate or wrap instead of overflowing.
// Contract: pure, no I/O, thread-safe.
#pragma once

#include <cstdint>
#include <limits>

namespace nvrtc_cache::store::lmdb {

inline std::uint64_t saturating_sub(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; }

inline std::uint64_t percent_of(std::uint64_t bytes, std::uint64_t percent) { return bytes / 100 * percent; }

inline std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

// Seconds from `then` to `now`, 0 if `then` is not earlier; saturating.
inline std::int64_t seconds_since(std::int64_t now, std::int64_t then) {
  if (then >= now) return 0;
  const std::uint64_t difference = static_cast<std::uint64_t>(now) - static_cast<std::uint64_t>(then);
  return difference > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
             ? std::numeric_limits<std::int64_t>::max()
             : static_cast<std::int64_t>(difference);
}

// `now - seconds` (seconds >= 0), saturating at the smallest time.
inline std::int64_t seconds_before(std::int64_t now, std::int64_t seconds) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  return now < kMin + seconds ? kMin : now - seconds;
}

}  // namespace nvrtc_cache::store::lmdb
