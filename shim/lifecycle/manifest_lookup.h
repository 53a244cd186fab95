// The direct-mode lookup every intercepted library shares (ccache's direct mode): the direct key
// names a manifest; its results are validated newest first against the files and environment they
// were made with, and the first result that still holds, decodes and is usable is the answer. A
// manifest or entry that fails to decode is counted as corrupt and erased. NVRTC compiles
// (libraries/nvrtc/compile_steps.h) and nvJitLink links (libraries/nvjitlink/) are two instances: they differ in the
// store key of a result, its decoder and what makes a decoded result usable.
// Contract: no OS calls of its own beyond the store and the validation of dependencies; counters go
// to the StatsDeltas given; no logging; may throw std::bad_alloc (the callers fail open).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/stats.h"
#include "direct/dependencies.h"
#include "direct/manifest.h"
#include "keying/cache_key.h"
#include "store/store.h"

namespace nvrtc_cache::shim {

template <typename Entry>
struct LookupOf {
  std::optional<Entry> entry;
  std::optional<direct::DependencySet> dependencies;  // the served result's
  std::string miss_reason;                            // for the log
  core::Counter miss = core::Counter::miss_other;     // for the statistics, decided with it
  std::int64_t validate_ns = 0;
};

// The miss reason of a program whose manifest or result eviction removed (store::Store::was_evicted).
inline constexpr const char* kEvictedReason = "evicted (the cache reached max_size)";

// Why a decoded result cannot answer this library: nullopt when it can.
struct Unusable {
  std::string why;
  core::Counter miss;
};

// `store_key_of(result_key)`: the result's store key; `decode(bytes)`: the entry or nullopt;
// `unusable(entry)`: optional<Unusable>; `on_corrupt_entry` (may be null): said for a corrupt entry.
template <typename Entry, typename StoreKeyOf, typename Decode, typename UnusableFn>
LookupOf<Entry> look_up_manifest(store::Store& store, const keying::CacheKey& direct_key, core::StatsDeltas& stats,
                                 StoreKeyOf&& store_key_of, Decode&& decode, UnusableFn&& unusable,
                                 void (*on_corrupt_entry)() = nullptr) {
  using Clock = std::chrono::steady_clock;
  LookupOf<Entry> out;
  const std::string manifest_key = direct::manifest_store_key(direct_key);
  std::optional<std::string> bytes = store.get(manifest_key);
  if (!bytes) {
    const bool evicted = store.was_evicted(manifest_key);
    out.miss_reason = evicted ? kEvictedReason : "no manifest";
    out.miss = evicted ? core::Counter::miss_evicted : core::Counter::miss_new;
    return out;
  }
  std::optional<direct::Manifest> manifest = direct::decode_manifest(*bytes);
  if (!manifest) {
    stats.add(core::Counter::corrupt);
    (void)store.erase(manifest_key);
    out.miss_reason = "the manifest was corrupt";
    out.miss = core::Counter::miss_result_gone;
    return out;
  }
  const auto first_reason = [&out](std::string why, core::Counter miss) {
    if (!out.miss_reason.empty()) return;
    out.miss_reason = std::move(why);
    out.miss = miss;
  };
  for (direct::ManifestResult& result : manifest->results) {
    const auto validate_start = Clock::now();
    const direct::Validation v = direct::validate_dependencies(result.dependencies);
    out.validate_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - validate_start).count();
    if (!v.matches) {
      first_reason(v.mismatch, v.kind == direct::Mismatch::kEnvironment ? core::Counter::miss_environment
                               : v.kind == direct::Mismatch::kDate      ? core::Counter::miss_date
                                                                        : core::Counter::miss_dependency);
      continue;
    }
    const std::string key = store_key_of(result.result_key);
    std::optional<std::string> entry_bytes = store.get(key);
    if (!entry_bytes) {
      const bool evicted = store.was_evicted(key);
      first_reason(evicted ? kEvictedReason : "the result is gone from the store",
                   evicted ? core::Counter::miss_evicted : core::Counter::miss_result_gone);
      continue;
    }
    out.entry = decode(*entry_bytes);
    if (!out.entry) {
      stats.add(core::Counter::corrupt);
      if (on_corrupt_entry) on_corrupt_entry();
      (void)store.erase(key);
      continue;
    }
    if (std::optional<Unusable> why = unusable(*out.entry)) {
      out.entry.reset();
      first_reason(std::move(why->why), why->miss);
      continue;
    }
    if (v.refreshed) (void)store.put(manifest_key, direct::encode_manifest(*manifest));  // touched files
    out.dependencies = std::move(result.dependencies);
    out.miss_reason.clear();
    return out;
  }
  first_reason("no result in the manifest", core::Counter::miss_result_gone);
  return out;
}

}  // namespace nvrtc_cache::shim
