// Stats: the cache's counters. Each process accumulates deltas in atomics and merges them into the
// store's shared counters (one transaction) after every store write, at most once a second on hits,
// and at exit; `nvrtc-cache stats` reads the merged totals of every process.
// Contract: add()/take()/clear() are thread-safe and lock-free; no I/O here.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "store/store.h"

namespace nvrtc_cache::core {

#define NVRTC_CACHE_COUNTERS(X)                                                   \
  X(hits, "compiles served from the cache")                                       \
  X(misses, "compiles looked up, not found, compiled and stored")                 \
  X(uncacheable, "compiles passed to NVRTC without caching (files, env, options)") \
  X(stores, "entries written")                                                    \
  X(errors, "internal errors that fell back to NVRTC")                            \
  X(corrupt, "entries that failed verification and were dropped")                 \
  X(saved_ns, "compile time saved by hits (recorded compile time - hit time)")    \
  X(compile_ns, "time spent in real compiles on misses")                          \
  X(hit_keying_ns, "time spent deriving keys on hits")                            \
  X(hit_lookup_ns, "time spent in store lookups on hits")                         \
  X(hit_validate_ns, "time spent re-validating dependencies on hits")            \
  X(hit_replay_ns, "time spent decoding entries on hits")                         \
  X(waited, "compiles that waited for another compile of the same program")      \
  X(wait_ns, "time spent waiting for another compile of the same program")

enum class Counter {
#define X(name, help) name,
  NVRTC_CACHE_COUNTERS(X)
#undef X
  kCount
};

inline constexpr std::array<std::string_view, static_cast<std::size_t>(Counter::kCount)> kCounterNames = {
#define X(name, help) #name,
    NVRTC_CACHE_COUNTERS(X)
#undef X
};

class StatsDeltas {
 public:
  void add(Counter c, std::int64_t delta = 1) {
    values_[static_cast<std::size_t>(c)].fetch_add(delta, std::memory_order_relaxed);
  }
  // Moves the accumulated deltas out (non-zero ones only).
  store::Counters take();
  // Drops the accumulated deltas; allocates nothing (a forked child's fork handler).
  void clear() {
    for (auto& v : values_) v.store(0, std::memory_order_relaxed);
  }

 private:
  std::array<std::atomic<std::int64_t>, static_cast<std::size_t>(Counter::kCount)> values_{};
};

}  // namespace nvrtc_cache::core
