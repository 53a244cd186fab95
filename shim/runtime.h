// Runtime: the shim's process-wide state: configuration, the store, and the statistics deltas.
// Contract: created on first use (never in a constructor of the shim), leaked at exit so late
// threads and exit handlers can still call it; thread-safe. The store is opened on the first
// compile; if it cannot be opened that is logged once and every compile passes through. Fork:
// creation and the store's opening are guarded by locks of the fork order (platform/fork_locks.h),
// never by a static guard or std::call_once a child could inherit "in progress"; the child drops
// the parent's unflushed counters and the store reopens itself.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "core/config.h"
#include "core/stats.h"
#include "store/counter_file.h"
#include "store/store.h"

namespace nvrtc_cache::store::remote {
class TieredStore;
}

namespace nvrtc_cache::shim {

class Runtime {
 public:
  static Runtime& instance();

  const core::Config& config() const { return config_; }
  bool enabled() const { return !config_.disabled; }
  // The cache's store, or nullptr when it is unavailable (already logged).
  store::Store* store();
  // The store's shared tiers (NVRTC_CACHE_REMOTE), or nullptr when there are none; valid once
  // store() returned.
  store::remote::TieredStore* tiered_store() const { return tiered_; }
  core::StatsDeltas& stats() { return stats_; }
  bool store_read_only() const { return read_only_; }
  // The cache directory the store was opened in (empty before, or when it could not be opened).
  const std::string& cache_directory() const { return cache_directory_; }
  // Merges this process's counter deltas into the store: always when `force` (after a store, and
  // at exit, where the shared tiers' queued writes get at most 1 s first), else at
  // most once a second, the first time a second after the runtime was created (a short process's
  // compiles write nothing: its counters are merged at exit, with the store's queued touches).
  void flush_stats(bool force);

 private:
  // Counts of a read-only cache go to the user's own counters file (store/read_only_counts.h).
  void count_read_only_cache();
  Runtime();
  core::Config config_;
  core::StatsDeltas stats_;
  std::atomic<bool> store_opened_{false};  // store_ and read_only_ are set (under the open lock)
  std::unique_ptr<store::Store> store_;
  store::remote::TieredStore* tiered_ = nullptr;  // store_ itself when shared tiers are configured
  bool read_only_ = false;                        // a read-only cache: hits only, counted in read_only_counts_
  // The user's own counters file for a read-only cache (store/read_only_counts.h); never freed.
  std::unique_ptr<store::CounterFile> read_only_counts_;
  std::string cache_directory_;
  std::atomic<std::int64_t> last_flush_ns_;
  std::atomic<std::uint64_t> corrupt_reported_{0};
};

}  // namespace nvrtc_cache::shim
