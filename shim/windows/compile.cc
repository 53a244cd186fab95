// The Windows proxy's program hooks: create and compile (the lifecycle is shim/lifecycle/compile_lifecycle.h's,
// shared with Linux; this file is its Windows host: the import watch (shim/windows/compile_watch.h)
// and the thread's last-error value; the getters are libraries/nvrtc/getters.cc's). Single-flight between the
// processes of a node is the Linux shim's (shim/flight/single_flight.h, claim files locked with LockFileEx).
// So are compile records (NVRTC_CACHE_RECORD, shim/record_writer.h). Differences from Linux: no
// shared tiers; counters are added to the store's
// mapped counters file (store/counter_file.h) after every compile, which takes no transaction (a
// process's exit on Windows runs no safe place for it). The import watch is installed by the first
// real compile through the cache (compile_observed), so a hit never patches NVRTC.
//
// The environment block: the Windows NVRTC's C runtime calls GetEnvironmentStringsW in every compile
// (to refresh its copy of the environment, which its getenv then reads by name, unseen). Tainting it
// would make every compile uncacheable; instead the variables that NVRTC's getenv can ask for (the
// names its DLL contains, shim/windows/crt_environment.def) are each recorded, present or absent, as a dependency
// of every compile that read the block, and validated on a hit like any variable read by name.
#include <windows.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/compile_entry.h"
#include "core/stats.h"
#include "direct/dependencies.h"
#include "direct/manifest.h"
#include "keying/cache_key.h"
#include "keying/working_directory_rule.h"
#include "platform/env.h"
#include "platform/windows/last_error.h"
#include "platform/windows/wide.h"
#include "libraries/nvrtc/capture.h"
#include "shim/lifecycle/compile_lifecycle.h"
#include "libraries/nvrtc/compile_steps.h"
#include "libraries/nvrtc/hooks.h"
#include "libraries/nvrtc/program_table.h"
#include "shim/record_writer.h"
#include "shim/flight/single_flight.h"
#include "shim/windows/compile_watch.h"
#include "shim/windows/real_dll.h"
#include "shim/windows/runtime.h"

namespace nvrtc_cache::shim::hooks {
namespace {

using windows::WindowsRuntime;

// The environment variables nvrtc64_130_0.dll's getenv may read.
constexpr const char* kCrtVariables[] = {
#define NVRTC_CACHE_CRT_VARIABLE(name) #name,
#include "shim/windows/crt_environment.def"
#undef NVRTC_CACHE_CRT_VARIABLE
};

// Keeps the thread's last-error value across the proxy's own work.
using LastErrorGuard = platform::windows::LastErrorKept;

std::optional<std::string> crt_variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

// What the compile depended on; no set when it must not be stored.
direct::RecordedDependencies dependencies_of(const windows::CompileWatch& watch, std::int64_t start_realtime_ns,
                                             const ProgramRecord& record) {
  direct::RecordedDependencies dependencies;
  if (watch.tainted()) {
    dependencies.why_not = watch.why_tainted();
    dependencies.reason = watch.taint_reason();
    return dependencies;
  }
  // No event is no reason to refuse (unlike Linux, where it means the interposers were bypassed): the
  // watch is known to be installed (WindowsRuntime::watch_installed, checked before the compile), and
  // NVRTC rejects a bad option before it reads anything.
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
  return nvrtc_dependencies(std::move(observations), record, start_realtime_ns, {}, crt_variable("NVRTC_APPEND_FLAGS"));
}

// The Windows proxy's part of the lifecycle: the WindowsRuntime's store and statistics, the import
// watch, single-flight claims, compile records, the thread's last-error value; statistics are merged
// by the hook after every compile.
class WindowsCompileHost final : public CompileHost {
 public:
  store::Store* store() override { return runtime_.store(); }
  bool store_read_only() override { return false; }
  core::StatsDeltas& stats() override { return runtime_.stats(); }
  int compression_level() override { return runtime_.compression_level(); }
  std::optional<std::string> append_flags() override { return crt_variable("NVRTC_APPEND_FLAGS"); }
  CompileContext compile_context() override {
    // No $PWD convention on Windows; NVRTC_APPEND_FLAGS from the process environment.
    return {platform::Env::system()->current_directory().value_or("(unknown)"), std::nullopt,
            platform::windows::environment_variable(L"NVRTC_APPEND_FLAGS")};
  }
  int error_state() override { return static_cast<int>(GetLastError()); }

  Flight claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready) override {
    FlightSettings settings;
    settings.cache_directory = runtime_.cache_directory();
    settings.shared = runtime_.config().shared;
    settings.wait_timeout = runtime_.config().wait_timeout;
    settings.stats = &runtime_.stats();
    return as_flight(shim::claim_or_wait(settings, key, result_ready));
  }

  void compile_recorded(const interpose::RealNvrtc& real, const ProgramRecord& record,
                        const direct::DependencySet& dependencies) override {
    (void)real;
    const std::string& record_file = runtime_.config().record_file;
    if (!record_file.empty()) append_compile_record(record_file, windows::real_nvrtc_path(), record, dependencies);
  }

  ObservedCompile compile_observed(const interpose::RealNvrtc& real, nvrtcProgram prog, int n,
                                   const char* const* options, const ProgramRecord& record) override {
    ObservedCompile out;
    // The import watch is installed here, before the first real compile, and never on a hit (whose
    // dependencies are validated by the proxy's own reads): a hit does no patching.
    const bool watched = runtime_.watch_installed();
    const std::int64_t start_realtime_ns = platform::Env::system()->now_realtime_ns();
    windows::CompileWatch watch;
    const auto compile_start = SteadyClock::now();
    out.rc = real.nvrtcCompileProgram(prog, n, options);
    const auto compile_end = SteadyClock::now();
    out.error_after = static_cast<int>(GetLastError());
    watch.stop();
    out.nanos = nanos_between(compile_start, compile_end);
    if (!watched) {
      out.dependencies.why_not = "NVRTC's file accesses are not observable here (capture)";
      out.dependencies.reason = direct::NotRecorded::kUnobservable;
    } else {
      try {
        out.dependencies = dependencies_of(watch, start_realtime_ns, record);
      } catch (...) {
        out.internal_error = true;  // the result stands, uncached
      }
    }
    SetLastError(static_cast<DWORD>(out.error_after));
    return out;
  }

 private:
  WindowsRuntime& runtime_ = WindowsRuntime::instance();
};

}  // namespace

nvrtcResult nvrtcCreateProgram(const interpose::RealNvrtc& real, nvrtcProgram* prog, const char* src, const char* name,
                               int num_headers, const char* const* headers, const char* const* include_names) {
  const nvrtcResult rc = real.nvrtcCreateProgram(prog, src, name, num_headers, headers, include_names);
  WindowsRuntime& runtime = WindowsRuntime::instance();
  return record_created_program<LastErrorGuard>(
      rc, prog, runtime.enabled(), [&] { return runtime.identity(real); }, src, name, num_headers, headers,
      include_names);
}

nvrtcResult nvrtcCompileProgram(const interpose::RealNvrtc& real, nvrtcProgram prog, int num_options,
                                const char* const* options) {
  WindowsRuntime& runtime = WindowsRuntime::instance();
  std::shared_ptr<ProgramRecord> record = runtime.enabled() ? program_table().find(prog) : nullptr;
  if (!record) return real.nvrtcCompileProgram(prog, num_options, options);
  LastErrorGuard last_error;
  WindowsCompileHost host;
  int error_after = 0;
  const nvrtcResult rc = compile_program(host, real, *record, prog, num_options, options, &error_after);
  last_error.set(static_cast<DWORD>(error_after));
  try {
    runtime.flush_shared_writes();  // before the counters, which then include the shared writes
    runtime.flush_stats();
  } catch (...) {
  }
  return rc;
}

}  // namespace nvrtc_cache::shim::hooks
