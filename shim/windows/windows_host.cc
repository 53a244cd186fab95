// The Windows proxy's JitHost (shim/lifecycle/jit_host.h): the WindowsRuntime's store and statistics
// (shim/windows/runtime.h), the import watch (shim/windows/compile_watch.h), single-flight between the
// processes of a node (the Linux shim's shim/flight/single_flight.h, claim files locked with
// LockFileEx) and records (NVRTC_CACHE_RECORD). Differences from Linux: counters are added to the
// store's mapped counters file (store/counter_file.h) whenever the lifecycle may merge them, which
// takes no transaction (a process's exit on Windows runs no safe place for it). The import watch is
// installed on a real DLL by the first real call through the cache (run_watched), so a hit never
// patches it.
//
// The environment block: the Windows NVRTC's C runtime calls GetEnvironmentStringsW in every compile
// (to refresh its copy of the environment, which its getenv then reads by name, unseen). Tainting it
// would make every compile uncacheable; instead the variables that NVRTC's getenv can ask for (the
// names its DLL contains, shim/windows/crt_environment.def) are each recorded, present or absent, as a
// dependency of every compile that read the block, and validated on a hit like any variable read by name.
#include <windows.h>

#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/env.h"
#include "platform/windows/wide.h"
#include "shim/flight/single_flight.h"
#include "shim/lifecycle/jit_host.h"
#include "shim/windows/compile_watch.h"
#include "shim/windows/module_identity.h"
#include "shim/windows/module_path.h"
#include "shim/windows/runtime.h"

namespace nvrtc_cache::shim {
namespace {

using windows::WindowsRuntime;

// The environment variables nvrtc64_130_0.dll's getenv may read.
constexpr const char* kCrtVariables[] = {
#define NVRTC_CACHE_CRT_VARIABLE(name) #name,
#include "shim/windows/crt_environment.def"
#undef NVRTC_CACHE_CRT_VARIABLE
};

// The Windows proxy's host: the WindowsRuntime's store and statistics, the import watch,
// single-flight claims, records; statistics are merged whenever the lifecycle may.
class WindowsHost final : public JitHost {
 public:
  bool enabled() override { return runtime_.enabled(); }
  store::Store* store() override { return runtime_.store(); }
  bool store_read_only() override { return false; }
  core::StatsDeltas& stats() override { return runtime_.stats(); }
  int compression_level() override { return runtime_.compression_level(); }

  Flight claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready) override {
    FlightSettings settings;
    settings.cache_directory = runtime_.cache_directory();
    settings.shared = runtime_.config().shared;
    settings.wait_timeout = runtime_.config().wait_timeout;
    settings.stats = &runtime_.stats();
    return as_flight(shim::claim_or_wait(settings, key, result_ready));
  }

  WatchedCall run_watched(const WatchedLibrary& library, const std::function<void()>& call,
                          const DependencyRule& rule) override {
    WatchedCall out;
    // The import watch is installed here, before the first real call, and never on a hit (whose
    // dependencies are validated by the proxy's own reads): a hit does no patching.
    const bool watched = runtime_.watch_installed(library.code);
    const std::int64_t start_realtime_ns = platform::Env::system()->now_realtime_ns();
    windows::CompileWatch watch;
    const auto start = SteadyClock::now();
    call();
    const auto end = SteadyClock::now();
    out.error_after = static_cast<int>(GetLastError());
    watch.stop();
    out.nanos = nanos_between(start, end);
    if (!watched) {
      out.dependencies.why_not =
          std::string(core::library_name(library.library)) + "'s file accesses are not observable here (capture)";
      out.dependencies.reason = direct::NotRecorded::kUnobservable;
    } else {
      try {
        out.dependencies = dependencies_of(watch, start_realtime_ns, rule);
      } catch (...) {
        out.internal_error = true;  // the result stands, uncached
      }
    }
    SetLastError(static_cast<DWORD>(out.error_after));
    return out;
  }

  std::string record_file() override { return runtime_.config().record_file; }
  // Counters go to the store's mapped counters file at once (nothing runs at a Windows process's
  // exit to merge them later), after the shared-tier writes of a call that stored.
  void flush_stats(bool stored) override {
    if (stored) runtime_.flush_shared_writes();
    runtime_.flush_stats();
  }
  std::string library_path(const void* link_map, const void* code) override {
    (void)link_map;
    return platform::windows::to_utf8(windows::module_path(windows::module_containing(code)));
  }

 private:
  // What the call depended on; no set when it must not be stored.
  static direct::RecordedDependencies dependencies_of(const windows::CompileWatch& watch,
                                                      std::int64_t start_realtime_ns, const DependencyRule& rule) {
    direct::RecordedDependencies dependencies;
    if (watch.tainted()) {
      dependencies.why_not = watch.why_tainted();
      dependencies.reason = watch.taint_reason();
      return dependencies;
    }
    // No event is no reason to refuse (unlike Linux, where it means the interposers were bypassed):
    // the watch is known to be installed (WindowsRuntime::watch_installed, checked before the call),
    // and NVRTC rejects a bad option before it reads anything.
    std::vector<direct::Observation> observations = watch.observations();
    std::vector<std::string> values;  // owns the variables' values the observations view
    if (watch.environment_block_read()) {
      values.reserve(std::size(kCrtVariables));
      for (const char* name : kCrtVariables) {
        const auto value = platform::windows::environment_variable(platform::windows::to_wide(name));
        values.push_back(value.value_or(""));
        observations.push_back({direct::ObservationKind::kGetenv, value.has_value(), false, name, values.back()});
      }
    }
    return rule(std::move(observations), start_realtime_ns, {});
  }

  WindowsRuntime& runtime_ = WindowsRuntime::instance();
};

}  // namespace

JitHost& jit_host() {
  static auto* host = new WindowsHost();  // leaked: usable from late threads
  return *host;
}

}  // namespace nvrtc_cache::shim
