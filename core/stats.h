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

#include "core/jit_library.h"
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
  X(link_hit_keying_ns, "time spent deriving keys on link hits")                    \
  X(link_hit_lookup_ns, "time spent in store lookups on link hits")                 \
  X(link_hit_validate_ns, "time spent re-validating dependencies on link hits")     \
  X(nvvm_hits, "libNVVM compiles served from the cache")                            \
  X(nvvm_misses, "libNVVM compiles looked up, not found, compiled and stored")      \
  X(nvvm_uncacheable, "libNVVM compiles passed through without caching")            \
  X(nvvm_saved_ns, "libNVVM compile time saved by hits")                            \
  X(nvvm_ns, "time spent in real libNVVM compiles on misses")                       \
  X(nvvm_hit_keying_ns, "time spent deriving keys on libNVVM hits")                 \
  X(nvvm_hit_lookup_ns, "time spent in store lookups on libNVVM hits")              \
  X(nvvm_hit_validate_ns, "time spent re-validating dependencies on libNVVM hits")  \
  X(api_hits, "C API and ProgramCache look-ups served (include/nvrtc_cache.h)")     \
  X(api_misses, "C API and ProgramCache look-ups not found")                        \
  X(api_stores, "C API and ProgramCache entries written")

// Why a call was uncacheable or missed, counted beside its library's `uncacheable` and `misses`
// (each such call adds one to exactly one reason). The same rows for every library: NVRTC's stored as
// "uncacheable.<reason>" / "miss.<reason>" (ids as below), nvJitLink's as "link.uncacheable.<reason>"
// (ids link_...), libNVVM's as "nvvm.uncacheable.<reason>" (nvvm_...); a reason a library cannot
// have stays 0. LIB names the library in the one row that does ("uncacheable.nvrtc_error").
#define NVRTC_CACHE_REASONS(X, P, S, LIB)                                                                            \
  X(P##uncacheable_time, S "uncacheable.time", "__TIME__ or __TIMESTAMP__ is used")                                  \
  X(P##uncacheable_side_effect_option, S "uncacheable.side_effect_option",                                           \
    "an option with side effects (--time, --fdevice-time-trace, -pch, --create-pch, --use-pch; -time)")              \
  X(P##uncacheable_unknown_option, S "uncacheable.unknown_option",                                                   \
    "an option this build does not know for that library version (it could add an output or a side effect)")         \
  X(P##uncacheable_unknown_function, S "uncacheable.unknown_function",                                               \
    "the library exports a function this build does not know (a newer release)")                                     \
  X(P##uncacheable_unsupported_version, S "uncacheable.unsupported_version",                                         \
    "a library version the cache does not support (NVRTC 11.x, nvJitLink 12.0 to 12.2), passed through")             \
  X(P##uncacheable_flow_callback, S "uncacheable.flow_callback", "the program has a flow callback")                  \
  X(P##uncacheable_inputs, S "uncacheable.inputs_not_captured",                                                      \
    "inputs that could not be captured (NULL headers, options or data, __nvrtcCPEx, an input file unreadable)")      \
  X(P##uncacheable_file_modified, S "uncacheable.file_modified", "a file it read was modified during the call")      \
  X(P##uncacheable_wrote_file, S "uncacheable.wrote_or_listed", "the library wrote a file or listed a directory")    \
  X(P##uncacheable_unwatchable, S "uncacheable.unwatchable",                                                         \
    "the library did something the watch cannot follow (capture bound, started a program, another thread...)")       \
  X(P##uncacheable_unobservable, S "uncacheable.no_file_access", "no observable file access in this process")        \
  X(P##uncacheable_library_error, S "uncacheable." LIB "_error", "the library returned an error that is not cached") \
  X(P##uncacheable_output, S "uncacheable.output_unreadable", "an output could not be read back exactly")            \
  X(P##uncacheable_other, S "uncacheable.other", "another reason (the debug log names it)")                          \
  X(P##miss_new, S "miss.new_program", "first call with these inputs (no manifest)")                                 \
  X(P##miss_dependency, S "miss.dependency_changed", "a file it depends on changed, appeared or vanished")           \
  X(P##miss_environment, S "miss.environment_changed", "an environment variable the library read changed")           \
  X(P##miss_date, S "miss.date_changed", "__DATE__ is used and the date changed")                                    \
  X(P##miss_working_directory, S "miss.working_directory",                                                           \
    "compiled before in another working directory, which its output embeds (-dlto, -G, ...): see docs/limits.md")    \
  X(P##miss_evicted, S "miss.evicted", "its result was evicted to stay under max_size")                              \
  X(P##miss_result_gone, S "miss.result_gone", "the result was removed (damaged, or evicted before the last 1024)")  \
  X(P##miss_outputs, S "miss.outputs_missing",                                                                       \
    "the stored result lacks an output this library has (an older build's)")                                         \
  X(P##miss_other, S "miss.other", "another reason (the debug log names it)")

#define NVRTC_CACHE_REASON_COUNTERS(X)                \
  NVRTC_CACHE_REASONS(X, , "", "nvrtc")               \
  NVRTC_CACHE_REASONS(X, link_, "link.", "nvjitlink") \
  NVRTC_CACHE_REASONS(X, nvvm_, "nvvm.", "nvvm")

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

// The reasons of one library (the rows above, in order).
inline constexpr std::size_t kReasonCount = 0
#define X(id, name, help) +1
    NVRTC_CACHE_REASONS(X, , "", "nvrtc")
#undef X
    ;

// `nvrtc_reason` (one of NVRTC's reason rows, e.g. Counter::miss_new) as `library`'s row.
constexpr Counter reason_of(JitLibrary library, Counter nvrtc_reason) {
  const auto offset = static_cast<std::size_t>(nvrtc_reason) - static_cast<std::size_t>(Counter::uncacheable_time);
  const Counter first = library == JitLibrary::nvjitlink ? Counter::link_uncacheable_time
                        : library == JitLibrary::nvvm    ? Counter::nvvm_uncacheable_time
                                                         : Counter::uncacheable_time;
  return static_cast<Counter>(static_cast<std::size_t>(first) + offset);
}
static_assert(reason_of(JitLibrary::nvjitlink, Counter::miss_other) == Counter::link_miss_other);
static_assert(reason_of(JitLibrary::nvvm, Counter::miss_new) == Counter::nvvm_miss_new);
static_assert(static_cast<std::size_t>(Counter::kCount) ==
              static_cast<std::size_t>(Counter::uncacheable_time) + 3 * kReasonCount);

// The totals every library has: calls served, missed and passed through, the time hits saved and
// the time real calls took on misses, and a hit's latency split (keying, store lookup, validation of
// the dependencies).
struct LibraryCounters {
  Counter hits, misses, uncacheable, saved_ns, ns, hit_keying_ns, hit_lookup_ns, hit_validate_ns;
};
constexpr LibraryCounters counters_of(JitLibrary library) {
  switch (library) {
    case JitLibrary::nvjitlink:
      return {
          Counter::link_hits, Counter::link_misses,        Counter::link_uncacheable,   Counter::link_saved_ns,
          Counter::link_ns,   Counter::link_hit_keying_ns, Counter::link_hit_lookup_ns, Counter::link_hit_validate_ns};
    case JitLibrary::nvvm:
      return {
          Counter::nvvm_hits, Counter::nvvm_misses,        Counter::nvvm_uncacheable,   Counter::nvvm_saved_ns,
          Counter::nvvm_ns,   Counter::nvvm_hit_keying_ns, Counter::nvvm_hit_lookup_ns, Counter::nvvm_hit_validate_ns};
    case JitLibrary::nvrtc:
      break;
  }
  return {Counter::hits,       Counter::misses,        Counter::uncacheable,   Counter::saved_ns,
          Counter::compile_ns, Counter::hit_keying_ns, Counter::hit_lookup_ns, Counter::hit_validate_ns};
}
// The prefix of `library`'s stored names: "" (NVRTC), "link", "nvvm"; its totals are "<prefix>_hits"
// (NVRTC's "hits"), its reasons "<prefix>.miss.<reason>" (NVRTC's "miss.<reason>").
constexpr const char* counter_prefix(JitLibrary library) {
  return library == JitLibrary::nvjitlink ? "link" : library == JitLibrary::nvvm ? "nvvm" : "";
}

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
