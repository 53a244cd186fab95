#include "shim/runtime.h"

#include <pthread.h>

#include <cerrno>
#include <cstdlib>

#include "shim/log.h"
#include "store/cache_directory.h"

namespace nvrtc_cache::shim {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Runtime* g_runtime = nullptr;

void flush_at_exit() {
  if (g_runtime) g_runtime->flush_stats(true);
}

void forget_parent_counters() {
  // The parent will flush what it accumulated; the child starts from zero.
  if (g_runtime) (void)g_runtime->stats().take();
}

}  // namespace

Runtime& Runtime::instance() {
  static Runtime* runtime = [] {
    auto* r = new Runtime();
    g_runtime = r;
    pthread_atfork(nullptr, nullptr, forget_parent_counters);
    return r;
  }();
  return *runtime;
}

Runtime::Runtime() : config_(config_from_process_environment()) {
  log_configure(config_.log_level, config_.log_file);
  for (const auto& problem : config_.problems) log_line(LogLevel::kWarn, problem);
  if (config_.disabled) log_line(LogLevel::kInfo, "disabled by NVRTC_CACHE_DISABLE; every call goes to NVRTC");
}

store::Store* Runtime::store() {
  std::call_once(store_once_, [this] {
    const int saved_errno = errno;
    store::OpenedCache opened = store::open_cache(cache_policy(config_));
    for (const auto& message : opened.messages) log_line(LogLevel::kWarn, message);
    store_ = std::move(opened.store);
    read_only_ = opened.read_only;
    if (!store_) {
      log_once(LogLevel::kWarn, "store-open",
               "cannot open the cache at " + opened.directory + " (" + opened.status.message() +
                   "); compiling without the cache");
    } else {
      log_line(LogLevel::kDebug, "cache at " + opened.directory);
      cache_directory_ = opened.directory;
      std::atexit(flush_at_exit);
    }
    errno = saved_errno;
  });
  return store_.get();
}

void Runtime::flush_stats(bool force) {
  const std::int64_t now = now_ns();
  std::int64_t last = last_flush_ns_.load(std::memory_order_relaxed);
  if (!force && now - last < 1'000'000'000) return;
  if (!last_flush_ns_.compare_exchange_strong(last, now) && !force) return;
  store::Store* s = store_.get();
  if (s == nullptr || read_only_) return;
  const int saved_errno = errno;
  try {
    // Entries the store itself found damaged (envelope checksum) count as corrupt too.
    const std::uint64_t dropped = s->corrupt_entries_dropped();
    const std::uint64_t reported = corrupt_reported_.exchange(dropped);
    if (dropped > reported) {
      stats_.add(Counter::corrupt, static_cast<std::int64_t>(dropped - reported));
      log_once(LogLevel::kWarn, "corrupt-envelope", "a cache entry failed its checksum; dropped and recompiled");
    }
    if (s->stores_quarantined() > 0) {
      log_once(LogLevel::kWarn, "store-quarantined",
               "the cache store was damaged; it was moved aside (store.corrupt-*) and a fresh one started");
    }
    store::Counters deltas = stats_.take();
    if (!deltas.empty() && !s->add_counters(deltas)) {
      log_once(LogLevel::kWarn, "stats-flush", "could not record statistics in the cache");
    }
  } catch (...) {
  }
  errno = saved_errno;
}

}  // namespace nvrtc_cache::shim
