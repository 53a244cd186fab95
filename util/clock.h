// Clocks in nanoseconds: the wall clock (comparable with file timestamps) and the monotonic clock
// (for durations). Contract: pure reads of the system clocks; thread-safe, fork-safe, async-signal-safe.
#pragma once

#include <time.h>

#include <cstdint>

namespace nvrtc_cache::util {

inline std::int64_t to_ns(const timespec& ts) { return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec; }

// CLOCK_REALTIME: what file mtimes and ctimes are measured against.
inline std::int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return to_ns(ts);
}

// CLOCK_MONOTONIC (std::chrono::steady_clock's clock on Linux): for durations only.
inline std::int64_t steady_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return to_ns(ts);
}

}  // namespace nvrtc_cache::util
