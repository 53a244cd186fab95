// Stats: the cache's counters. Each process accumulates deltas in atomics and merges them into the
// store's shared counters (one transaction) after every store write, at most once a second on hits,
// and at exit; `nvrtc-cache stats` reads the merged totals of every process.
// Contract: add()/take()/clear() are thread-safe and lock-free; no I/O here but one log line, once,
// when the counters file faulted (store/counter_file.h: counting stops there, never the host).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "store/counter_file.h"
#include "store/store.h"

namespace nvrtc_cache::core {

#define NVRTC_CACHE_COUNTERS(X)                                                     \
  X(hits, "compiles served from the cache")                                         \
  X(misses, "compiles looked up, not found, compiled and stored")                   \
  X(uncacheable, "compiles passed to NVRTC without caching (files, env, options)")  \
  X(stores, "entries written")                                                      \
  X(errors, "internal errors that fell back to NVRTC")                              \
  X(corrupt, "entries that failed verification and were dropped")                   \
  X(saved_ns, "compile time saved by hits (recorded compile time - hit time)")      \
  X(compile_ns, "time spent in real compiles on misses")                            \
  X(hit_keying_ns, "time spent deriving keys on hits")                              \
  X(hit_lookup_ns, "time spent in store lookups on hits")                           \
  X(hit_validate_ns, "time spent re-validating dependencies on hits")               \
  X(hit_replay_ns, "time spent decoding entries on hits")                           \
  X(waited, "compiles that waited for another compile of the same program")         \
  X(wait_ns, "time spent waiting for another compile of the same program")          \
  X(evictions, "entries evicted to stay under max_size, least recently used first") \
  X(evicted_bytes, "payload bytes of the evicted entries")                          \
  X(link_hits, "nvJitLink links served from the cache")                             \
  X(link_misses, "nvJitLink links looked up, not found, linked and stored")         \
  X(link_uncacheable, "nvJitLink links passed through without caching")             \
  X(link_saved_ns, "link time saved by link hits")                                  \
  X(link_ns, "time spent in real links on link misses")                             \
  X(nvvm_hits, "libNVVM compiles served from the cache")                            \
  X(nvvm_misses, "libNVVM compiles looked up, not found, compiled and stored")      \
  X(nvvm_uncacheable, "libNVVM compiles passed through without caching")            \
  X(nvvm_saved_ns, "libNVVM compile time saved by hits")                            \
  X(nvvm_ns, "time spent in real libNVVM compiles on misses")

// Why a compile was uncacheable or missed, counted beside `uncacheable` and `misses` (each such
// compile adds one to exactly one reason). Stored as "uncacheable.<reason>" / "miss.<reason>".
#define NVRTC_CACHE_REASON_COUNTERS(X)                                                                           \
  X(uncacheable_time, "uncacheable.time", "__TIME__ or __TIMESTAMP__ is used")                                   \
  X(uncacheable_side_effect_option, "uncacheable.side_effect_option",                                            \
    "an option with side effects (--time, --fdevice-time-trace, -pch, --create-pch, --use-pch)")                 \
  X(uncacheable_unknown_option, "uncacheable.unknown_option",                                                    \
    "an option this build does not know for that NVRTC (it could add an output or a side effect)")               \
  X(uncacheable_unknown_function, "uncacheable.unknown_function",                                                \
    "the NVRTC exports a function this build does not know (a newer NVRTC)")                                     \
  X(uncacheable_unsupported_version, "uncacheable.unsupported_version",                                          \
    "an NVRTC older than 12.0 (11.x), passed through untouched")                                                 \
  X(uncacheable_flow_callback, "uncacheable.flow_callback", "the program has a flow callback")                   \
  X(uncacheable_inputs, "uncacheable.inputs_not_captured",                                                       \
    "inputs that could not be captured (NULL headers or options, __nvrtcCPEx)")                                  \
  X(uncacheable_file_modified, "uncacheable.file_modified", "a file it read was modified during the compile")    \
  X(uncacheable_wrote_file, "uncacheable.wrote_or_listed", "NVRTC wrote a file or listed a directory")           \
  X(uncacheable_unwatchable, "uncacheable.unwatchable",                                                          \
    "NVRTC did something the watch cannot follow (capture bound, started a program, another thread...)")         \
  X(uncacheable_unobservable, "uncacheable.no_file_access", "no observable file access in this process")         \
  X(uncacheable_nvrtc_error, "uncacheable.nvrtc_error", "NVRTC returned an error that is not cached")            \
  X(uncacheable_output, "uncacheable.output_unreadable", "an output could not be read back exactly")             \
  X(uncacheable_other, "uncacheable.other", "another reason (the debug log names it)")                           \
  X(miss_new, "miss.new_program", "first compile of these inputs (no manifest)")                                 \
  X(miss_dependency, "miss.dependency_changed", "a file it depends on changed, appeared or vanished")            \
  X(miss_environment, "miss.environment_changed", "an environment variable NVRTC read changed")                  \
  X(miss_date, "miss.date_changed", "__DATE__ is used and the date changed")                                     \
  X(miss_evicted, "miss.evicted", "its result was evicted to stay under max_size")                               \
  X(miss_result_gone, "miss.result_gone", "the result was removed (damaged, or evicted before the last 1024)")   \
  X(miss_outputs, "miss.outputs_missing", "the stored result lacks an output this NVRTC has (an older build's)") \
  X(miss_other, "miss.other", "another reason (the debug log names it)")

enum class Counter {
#define X(name, help) name,
  NVRTC_CACHE_COUNTERS(X)
#undef X
#define X(id, name, help) id,
      NVRTC_CACHE_REASON_COUNTERS(X)
#undef X
          kCount
};

inline constexpr std::array<std::string_view, static_cast<std::size_t>(Counter::kCount)> kCounterNames = {
#define X(name, help) #name,
    NVRTC_CACHE_COUNTERS(X)
#undef X
#define X(id, name, help) name,
        NVRTC_CACHE_REASON_COUNTERS(X)
#undef X
};

inline constexpr std::array<std::string_view, static_cast<std::size_t>(Counter::kCount)> kCounterHelp = {
#define X(name, help) help,
    NVRTC_CACHE_COUNTERS(X)
#undef X
#define X(id, name, help) help,
        NVRTC_CACHE_REASON_COUNTERS(X)
#undef X
};

using store::CounterFile;

// A process's counts: accumulated here until attach()ed to the store's counters file, then added
// straight to it (every count survives the process's exit, whatever the exit). Thread-safe.
class StatsDeltas {
 public:
  void add(Counter c, std::int64_t delta = 1) {
    const auto i = static_cast<std::size_t>(c);
    if (source_ && generation_.load(std::memory_order_relaxed) != store::counter_file_generation()) reattach();
    if (std::atomic<std::int64_t>* cell = cells_[i].load(std::memory_order_acquire)) {
      if (CounterFile::add_to(cell, delta)) return;
      note_counting_stopped();
    }
    values_[i].fetch_add(delta, std::memory_order_relaxed);
  }
  // From now on counts go to the counters file `source` answers (cells that cannot be had stay
  // here), asked again whenever store::counter_file_generation() changes (a damaged store moved
  // aside: the fresh one counts in its own file); what accumulated so far is moved there. Call once,
  // before other threads count; `source` must stay callable and its files live while counting.
  using CounterFileSource = CounterFile* (*)(void* context);
  void attach(CounterFileSource source, void* context);
  // Moves the accumulated deltas out (non-zero ones only).
  store::Counters take();
  // Drops the accumulated deltas; allocates nothing (a forked child's fork handler).
  void clear() {
    for (auto& v : values_) v.store(0, std::memory_order_relaxed);
    reattaching_.store(false, std::memory_order_relaxed);  // a thread of the parent may have been at it
  }

 private:
  std::array<std::atomic<std::int64_t>, static_cast<std::size_t>(Counter::kCount)> values_{};
  std::array<std::atomic<std::atomic<std::int64_t>*>, static_cast<std::size_t>(Counter::kCount)> cells_{};
  void reattach();
  // A fault in the counters file's mapping stopped counting there (CounterFile::add_to): said once
  // in the log; this process's counts stay here, merged into the store like any unattached count.
  [[gnu::cold, gnu::noinline]] static void note_counting_stopped();
  CounterFileSource source_ = nullptr;
  void* context_ = nullptr;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> reattaching_{false};  // one thread looks again; the others count here meanwhile
};

}  // namespace nvrtc_cache::core
