// The program lifecycle hooks of the Windows proxy: create, add name expression, flow callback,
// compile, destroy (the getters are shim/replay.cc's, shared with Linux; the steps both share are
// shim/compile_steps.h's). The same flow as shim/compile.cc: capture the inputs -> key (keying/) -> look up the manifest, validate its
// dependency sets (direct/) -> serve the entry, or compile under the import watch
// (shim/windows/compile_watch.h), record the dependencies and store the entry (core/compile_entry).
// Differences from Linux: no single-flight claims, no shared tiers, no compile records; counters are
// merged into the store after every compile (a process's exit on Windows runs no safe place for it).
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
#include <string>
#include <string_view>
#include <vector>

#include "core/compile_entry.h"
#include "core/stats.h"
#include "direct/dependencies.h"
#include "direct/manifest.h"
#include "keying/cache_key.h"
#include "keying/working_directory_rule.h"
#include "platform/windows/last_error.h"
#include "platform/windows/wide.h"
#include "shim/capture.h"
#include "shim/compile_steps.h"
#include "shim/hooks.h"
#include "shim/program_table.h"
#include "shim/windows/compile_watch.h"
#include "shim/windows/runtime.h"

namespace nvrtc_cache::shim::hooks {
namespace {

using windows::WindowsRuntime;
using Clock = SteadyClock;

// The environment variables nvrtc64_130_0.dll's getenv may read.
constexpr const char* kCrtVariables[] = {
#define NVRTC_CACHE_CRT_VARIABLE(name) #name,
#include "shim/windows/crt_environment.def"
#undef NVRTC_CACHE_CRT_VARIABLE
};

// Keeps the thread's last-error value across the proxy's own work.
using LastErrorGuard = platform::windows::LastErrorKept;

std::string current_working_directory() {
  std::wstring dir(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetCurrentDirectoryW(static_cast<DWORD>(dir.size()), dir.data());
    if (n == 0) return "(unknown)";
    if (n < dir.size()) {
      dir.resize(n);
      return platform::windows::to_utf8(dir);
    }
    dir.resize(n);
  }
}

void record_compile_context(ProgramRecord& record, int n, const char* const* options) {
  record.inputs.options.assign(options, options + n);
  record.inputs.working_directory = current_working_directory();
  record.inputs.pwd_variable.reset();  // no $PWD convention on Windows
  const auto append_flags = platform::windows::environment_variable(L"NVRTC_APPEND_FLAGS");
  record.inputs.working_directory_use = keying::working_directory_use(
      record.inputs.options, record.inputs.name,
      append_flags ? std::optional<std::string_view>(*append_flags) : std::nullopt);
}

// What the compile depended on; no set when it must not be stored.
direct::RecordedDependencies dependencies_of(const windows::CompileWatch& watch, nvrtcResult rc,
                                             std::int64_t start_realtime_ns, const ProgramRecord& record) {
  direct::RecordedDependencies dependencies;
  if (!result_is_cacheable(rc)) {
    dependencies.why_not = "NVRTC returned " + std::to_string(rc);
    return dependencies;
  }
  if (watch.tainted()) {
    dependencies.why_not = watch.why_tainted();
    return dependencies;
  }
  // No event is no reason to refuse (unlike Linux, where it means the interposers were bypassed): the
  // watch is known to be installed (WindowsRuntime::watch_installed), and NVRTC rejects a bad option
  // before it reads anything.
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
  return direct::record_dependencies(observations, record.inputs.working_directory, start_realtime_ns,
                                     time_macros_in(record.inputs), {}, record.inputs.working_directory_use);
}

void keep_result(store::Store* store, const interpose::RealNvrtc& real, nvrtcProgram prog, const ProgramRecord& record,
                 const keying::CacheKey& direct_key, direct::RecordedDependencies dependencies, nvrtcResult rc,
                 std::int64_t compile_nanos, core::Counter miss_reason) {
  core::StatsDeltas& stats = WindowsRuntime::instance().stats();
  if (!dependencies.set) {
    stats.add(core::Counter::uncacheable);
    stats.add(core::uncacheable_reason(dependencies.why_not));
  } else if (store == nullptr) {
    stats.add(core::Counter::errors);
  } else {
    (void)store_result(*store, real, prog, record, direct_key, std::move(*dependencies.set), rc, compile_nanos,
                       miss_reason, stats);
  }
}

nvrtcResult compile_through_cache(const interpose::RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog, int n,
                                  const char* const* options, DWORD& last_error) {
  WindowsRuntime& runtime = WindowsRuntime::instance();
  const auto started = Clock::now();
  record_compile_context(record, n, options);
  const keying::CacheKey key = keying::compute_key(record.inputs);
  store::Store* store = runtime.store();
  const auto keyed = Clock::now();

  std::string miss_reason = "the cache is unavailable";
  if (store) {
    Lookup found = look_up(*store, key, real, runtime.stats());
    if (found.entry) {
      return serve_hit(record, std::move(*found.entry), started, keyed, Clock::now(), found.validate_ns, 0,
                       runtime.stats());
    }
    miss_reason = std::move(found.miss_reason);
  }

  record.served.reset();
  const std::int64_t start_realtime_ns = store::Env::system()->now_realtime_ns();
  windows::CompileWatch watch;
  const auto compile_start = Clock::now();
  const nvrtcResult rc = real.nvrtcCompileProgram(prog, n, options);
  const auto compile_end = Clock::now();
  last_error = GetLastError();
  watch.stop();
  try {  // the real compile stands; only the caching can fail from here on
    direct::RecordedDependencies dependencies = dependencies_of(watch, rc, start_realtime_ns, record);
    keep_result(store, real, prog, record, key, std::move(dependencies), rc, nanos_between(compile_start, compile_end),
                core::miss_reason(miss_reason));
  } catch (...) {
    runtime.stats().add(core::Counter::errors);
  }
  return rc;
}

}  // namespace

nvrtcResult nvrtcCreateProgram(const interpose::RealNvrtc& real, nvrtcProgram* prog, const char* src, const char* name,
                               int num_headers, const char* const* headers, const char* const* include_names) {
  const nvrtcResult rc = real.nvrtcCreateProgram(prog, src, name, num_headers, headers, include_names);
  WindowsRuntime& runtime = WindowsRuntime::instance();
  return record_created_program<LastErrorGuard>(rc, prog, runtime.enabled(), [&] { return runtime.identity(real); },
                                                src, name, num_headers, headers, include_names);
}

nvrtcResult nvrtcCompileProgram(const interpose::RealNvrtc& real, nvrtcProgram prog, int num_options,
                                const char* const* options) {
  WindowsRuntime& runtime = WindowsRuntime::instance();
  std::shared_ptr<ProgramRecord> record = runtime.enabled() ? program_table().find(prog) : nullptr;
  if (!record) return real.nvrtcCompileProgram(prog, num_options, options);
  LastErrorGuard last_error;
  try {
    const char* append_flags = std::getenv("NVRTC_APPEND_FLAGS");
    std::optional<NotCacheable> why_not =
        reason_not_cacheable(real, *record, num_options, options,
                             append_flags ? std::optional<std::string_view>(append_flags) : std::nullopt);
    if (!why_not && !runtime.watch_installed()) {
      why_not = NotCacheable{"NVRTC's file accesses are not observable here (capture)",
                             core::Counter::uncacheable_unobservable};
    }
    nvrtcResult rc;
    if (why_not) {
      runtime.stats().add(core::Counter::uncacheable);
      runtime.stats().add(why_not->reason);
      materialize_served(real, *record, prog);
      rc = real.nvrtcCompileProgram(prog, num_options, options);
      last_error.set(GetLastError());
    } else {
      DWORD error_after = GetLastError();
      rc = compile_through_cache(real, *record, prog, num_options, options, error_after);
      last_error.set(error_after);
    }
    runtime.flush_stats();
    return rc;
  } catch (...) {
    // Fail open: reached only before the real compile ran (keying, looking up; compile_through_cache
    // catches what follows the compile).
    runtime.stats().add(core::Counter::errors);
    record->served.reset();
    const nvrtcResult rc = real.nvrtcCompileProgram(prog, num_options, options);
    last_error.set(GetLastError());
    return rc;
  }
}

}  // namespace nvrtc_cache::shim::hooks
