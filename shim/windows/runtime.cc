#include "shim/windows/runtime.h"

#include <windows.h>

#include "libraries/nvrtc/compile_steps.h"
#include "shim/windows/compile_watch.h"
#include "shim/windows/module_identity.h"
#include "shim/windows/real_dll.h"
#include "shim/windows/store_open_ahead.h"
#include "core/config.h"
#include "core/log.h"
#include "core/shared_tiers.h"
#include "store/cache_directory.h"
#include "platform/windows/wide.h"

namespace nvrtc_cache::shim::windows {

namespace {

// How long a compile that stored waits for its shared-tier writes (the runtime's header says why).
constexpr std::chrono::milliseconds kSharedWriteBound{1000};

}  // namespace

WindowsRuntime& WindowsRuntime::instance() {
  static auto* runtime = new WindowsRuntime();  // leaked: usable from late threads
  return *runtime;
}

WindowsRuntime::WindowsRuntime() {
  try {
    config_ = core::config_from_process_environment();
  } catch (...) {
    config_.disabled = true;  // no settings (out of memory): pass every call through
  }
  enabled_ = !config_.disabled;
  try {
    core::log_configure(config_.log_level, config_.log_file);
    core::log_settings_problems(config_);
  } catch (...) {
  }
}

void WindowsRuntime::open_store_ahead() noexcept {
  try {
    const WindowsRuntime& runtime = instance();
    if (runtime.enabled_ && !runtime.config_.cache_dir.empty()) {
      start_store_open_ahead([] { WindowsRuntime::instance().open_store_once(); });
    }
  } catch (...) {
  }
}

store::Store* WindowsRuntime::store() {
  if (store_open_ahead_turn() == OpenAheadTurn::kTimedOut) {
    core::log_once(core::LogLevel::kWarn, "store-open-ahead",
                   "the cache is still being opened on another thread; compiling without it meanwhile");
    return nullptr;
  }
  open_store_once();
  return store_.get();
}

void WindowsRuntime::open_store_once() {
  std::call_once(store_once_, [this] {
    try {
      if (config_.cache_dir.empty()) return;
      // A damaged store is moved aside and recreated; an unusable directory leaves no store.
      store::OpenedCache opened = store::open_cache(core::cache_policy(config_));
      for (const auto& message : opened.messages) core::log_line(core::LogLevel::kWarn, message);
      if (opened.store == nullptr) {
        core::log_once(core::LogLevel::kWarn, "store-open",
                       "cannot open the cache at " + opened.directory + " (" + opened.status.message() +
                           "); compiling without the cache");
      } else {
        core::log_line(core::LogLevel::kDebug, "cache at " + opened.directory);
      }
      if (opened.store != nullptr) cache_directory_ = opened.directory;
      store_ = std::move(opened.store);
      if (store_ != nullptr && !config_.remote.empty()) {
        try {
          store_ = core::with_shared_tiers(std::move(store_), config_, &tiered_);
        } catch (...) {
          core::log_once(core::LogLevel::kWarn, "remote-open", "cannot use the shared tiers (NVRTC_CACHE_REMOTE)");
        }
      }
    } catch (...) {
      store_.reset();
      cache_directory_.clear();
    }
  });
}

void WindowsRuntime::flush_stats() {
  store::Store* s = store();
  if (s == nullptr) return;
  try {
    note_store_damage(*s, stats_, corrupt_reported_);
    const store::Counters deltas = stats_.take();
    if (!deltas.empty()) (void)s->add_counters(deltas);
  } catch (...) {
  }
}

void WindowsRuntime::flush_shared_writes() {
  if (store() == nullptr || tiered_ == nullptr) return;
  try {
    (void)tiered_->flush(kSharedWriteBound);
  } catch (...) {
  }
}

bool WindowsRuntime::watch_installed(const void* code) {
  const HMODULE module = module_containing(code);
  if (module == nullptr) return false;
  std::lock_guard lock(watch_mu_);
  for (const auto& [watched, installed] : watched_modules_) {
    if (watched == module) return installed;
  }
  const bool installed = install_compile_watch(module);
  watched_modules_.emplace_back(module, installed);
  return installed;
}

}  // namespace nvrtc_cache::shim::windows
