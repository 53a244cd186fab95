#include "shim/runtime.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>

#include "core/log.h"
#include "core/shared_tiers.h"
#include "core/settings.h"
#include "platform/errno_guard.h"
#include "platform/fork_locks.h"
#include "libraries/nvrtc/compile_steps.h"
#include "store/bounded_writes.h"
#include "store/cache_directory.h"
#include "store/counter_file.h"
#include "store/read_only_counts.h"
#include "store/remote/tiered_store.h"
#include "util/clock.h"

namespace nvrtc_cache::shim {
namespace {

std::atomic<Runtime*> g_runtime{nullptr};
// How long a write to the local store (a result, a manifest, the statistics) may wait for LMDB's
// write lock before the caller goes on without it (store/bounded_writes.h).
constexpr std::chrono::milliseconds kWriteBound{1000};
constinit std::mutex g_creation_mu;    // platform::ForkRank::kRuntimeCreation
constinit std::mutex g_store_open_mu;  // platform::ForkRank::kStoreOpen

void flush_at_exit() {
  Runtime* runtime = g_runtime.load(std::memory_order_acquire);
  if (runtime == nullptr) return;
  // The shared tiers' queued writes first (at most 1 s), so that their counters are merged too.
  if (store::remote::TieredStore* tiered = runtime->tiered_store())
    (void)tiered->flush(std::chrono::milliseconds(1000));
  runtime->flush_stats(true);
}

__attribute__((constructor)) void register_fork_locks() {
  using platform::ForkRank;
  platform::join_fork_order(ForkRank::kRuntimeCreation,
                            {[] { g_creation_mu.lock(); }, [] { g_creation_mu.unlock(); },
                             [] {
                               platform::renew_in_child(g_creation_mu);
                               // The parent will flush what it accumulated; the child starts from zero.
                               if (Runtime* runtime = g_runtime.load(std::memory_order_relaxed))
                                 runtime->stats().clear();
                             }});
  platform::join_fork_order(ForkRank::kStoreOpen, {[] { g_store_open_mu.lock(); }, [] { g_store_open_mu.unlock(); },
                                                   [] { platform::renew_in_child(g_store_open_mu); }});
}

}  // namespace

Runtime& Runtime::instance() {
  if (Runtime* runtime = g_runtime.load(std::memory_order_acquire)) return *runtime;
  std::lock_guard lock(g_creation_mu);
  if (Runtime* runtime = g_runtime.load(std::memory_order_relaxed)) return *runtime;
  auto* runtime = new Runtime();
  g_runtime.store(runtime, std::memory_order_release);
  return *runtime;
}

Runtime::Runtime() : config_(core::config_from_process_environment()), last_flush_ns_(util::steady_ns()) {
  core::log_configure(config_.log_level, config_.log_file);
  core::log_settings_problems(config_);
  if (config_.disabled)
    core::log_line(core::LogLevel::kInfo, "disabled (NVRTC_CACHE_DISABLE, " +
                                              config_.origins[core::setting_index(*core::find_setting("disable"))] +
                                              "); every call goes to NVRTC");
}

store::Store* Runtime::store() {
  if (store_opened_.load(std::memory_order_acquire)) return store_.get();
  std::lock_guard lock(g_store_open_mu);
  if (!store_opened_.load(std::memory_order_relaxed)) {
    const platform::ErrnoGuard errno_guard;
    store::CachePolicy policy = core::cache_policy(config_);
    policy.reads_write_touches = false;  // every write goes through BoundedWrites, hits included
    store::OpenedCache opened = store::open_cache(policy);
    for (const auto& message : opened.messages) core::log_line(core::LogLevel::kWarn, message);
    store_ = std::move(opened.store);
    read_only_ = opened.read_only;
    if (!store_) {
      core::log_once(core::LogLevel::kWarn, "store-open",
                     "cannot open the cache at " + opened.directory + " (" + opened.status.message() +
                         "); compiling without the cache");
    } else {
      core::log_line(core::LogLevel::kDebug, "cache at " + opened.directory);
      cache_directory_ = opened.directory;
      // No compile, and no exit, waits on another process's write transaction beyond the bound.
      store_ = std::make_unique<store::BoundedWrites>(std::move(store_), kWriteBound);
      if (!config_.remote.empty()) {
        try {
          store_ = core::with_shared_tiers(std::move(store_), config_, &tiered_);
        } catch (...) {
          core::log_once(core::LogLevel::kWarn, "remote-open", "cannot use the shared tiers (NVRTC_CACHE_REMOTE)");
        }
      }
      // Every count from now on goes straight to the counters file: none is lost to _exit or a kill.
      if (read_only_) {
        count_read_only_cache();
      } else if (store::CounterFile* counters = store_->counter_file(); counters != nullptr) {
        stats_.attach([](void* runtime) { return static_cast<Runtime*>(runtime)->store_->counter_file(); }, this);
        if (tiered_ != nullptr) tiered_->count_in(*counters);
      }
      std::atexit(flush_at_exit);
    }
    store_opened_.store(true, std::memory_order_release);
  }
  return store_.get();
}

void Runtime::count_read_only_cache() {
  std::string problem;
  read_only_counts_ = store::open_read_only_counts(cache_directory_, config_.fallback_dir, /*create=*/true, &problem);
  if (!read_only_counts_) {
    core::log_once(core::LogLevel::kWarn, "read-only-counts",
                   "the cache at " + cache_directory_ + " is read-only and its hits cannot be counted elsewhere (" +
                       problem + ")");
    return;
  }
  core::log_line(core::LogLevel::kDebug, "counting in " +
                                             store::read_only_counts_directory(cache_directory_, config_.fallback_dir) +
                                             " (the cache is read-only)");
  stats_.attach([](void* runtime) { return static_cast<Runtime*>(runtime)->read_only_counts_.get(); }, this);
  if (tiered_ != nullptr) tiered_->count_in(*read_only_counts_);
}

void Runtime::flush_stats(bool force) {
  const std::int64_t now = util::steady_ns();
  std::int64_t last = last_flush_ns_.load(std::memory_order_relaxed);
  if (!force && now - last < 1'000'000'000) return;
  if (!last_flush_ns_.compare_exchange_strong(last, now) && !force) return;
  store::Store* s = store_.get();
  if (s == nullptr || read_only_) return;
  const platform::ErrnoGuard errno_guard;
  try {
    // Entries the store itself found damaged (envelope checksum) count as corrupt too.
    note_store_damage(*s, stats_, corrupt_reported_);
    store::Counters deltas = stats_.take();
    // The shared tiers' counters ride along (TieredStore::add_counters), even without deltas here.
    // Forced (after a store, at exit): also writes the accesses queued by hits (add_counters does).
    if ((force || !deltas.empty() || tiered_ != nullptr) && !s->add_counters(deltas)) {
      core::log_once(core::LogLevel::kWarn, "stats-flush", "could not record statistics in the cache");
    }
  } catch (...) {
  }
}

}  // namespace nvrtc_cache::shim
