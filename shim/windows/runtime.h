// WindowsRuntime: the proxy DLL's process-wide state: its settings, the store (opened on a thread of
// its own from the first NVRTC call on, shim/windows/store_open_ahead.h, else by the first compile: the local LMDB
// store, with the shared tiers NVRTC_CACHE_REMOTE names behind it, store/remote/tiered_store.h), the statistics deltas
// and which real DLLs the import watch is installed on. Its settings are core/config.h's (the one settings table, with
// Windows paths for the files). Shared writes: queued by a compile that stored (as on Linux), then waited for before
// that compile returns (at most kSharedWriteBound), because a Windows process's exit ends every other thread before a
// DLL could flush them: nothing is flushed at exit. Contract: created on first use, leaked (usable from late threads);
// thread-safe; never throws (an allocation failure while opening leaves the store unavailable: compiles pass through);
// the thread's last-error value is kept.
#pragma once

#include <windows.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/stats.h"
#include "keying/program_inputs.h"
#include "libraries/nvrtc/real_nvrtc.h"
#include "store/remote/tiered_store.h"
#include "store/store.h"

namespace nvrtc_cache::shim::windows {

class WindowsRuntime {
 public:
  static WindowsRuntime& instance();

  bool enabled() const { return enabled_; }
  const core::Config& config() const { return config_; }
  // The store, or nullptr when it cannot be opened (tried once), or when the thread opening it ahead
  // is still at it after kOpenAheadWait (this compile then passes through).
  store::Store* store();
  // Starts opening the store on a thread of its own (once per process; nothing where the cache is
  // disabled or has no directory): called by every exported function before it needs the real DLL,
  // and by the launcher's LoadLibrary hooks. Never throws (the runtime not made: nothing started).
  static void open_store_ahead() noexcept;
  // The store's once-only open (the open-ahead thread's work; store() runs it where there is none).
  void open_store_once();
  // The cache directory the store was opened in (empty before, or when it could not be opened).
  const std::string& cache_directory() const { return cache_directory_; }
  core::StatsDeltas& stats() { return stats_; }
  // The zstd level new entries are stored at (the `compression` setting; 0: uncompressed).
  int compression_level() const { return config_.compression_level; }
  // Merges the counter deltas into the store.
  void flush_stats();
  // Waits (bounded) for the shared-tier writes this process queued; nothing to do without tiers.
  void flush_shared_writes();
  // Whether the file accesses of the real DLL holding `code` (NVRTC's with its builtins, nvJitLink's,
  // libNVVM's) can be watched: the import watch installed on it, once per DLL, by the first real call
  // through the cache.
  bool watch_installed(const void* code);

 private:
  WindowsRuntime();
  core::Config config_;
  bool enabled_ = true;
  core::StatsDeltas stats_;
  std::atomic<std::uint64_t> corrupt_reported_{0};  // the store's dropped entries already counted
  std::once_flag store_once_;
  std::unique_ptr<store::Store> store_;
  store::remote::TieredStore* tiered_ = nullptr;  // store_ itself when shared tiers are configured
  std::string cache_directory_;
  std::mutex watch_mu_;
  std::vector<std::pair<HMODULE, bool>> watched_modules_;  // under watch_mu_: each DLL and its outcome
};

}  // namespace nvrtc_cache::shim::windows
