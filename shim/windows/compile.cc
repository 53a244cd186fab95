// The program lifecycle hooks of the Windows proxy: create, add name expression, flow callback,
// compile, destroy (the getters are shim/replay.cc's, shared with Linux). The same flow as
// shim/compile.cc: capture the inputs -> key (keying/) -> look up the manifest, validate its
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
#include "shim/capture.h"
#include "shim/hooks.h"
#include "shim/program_table.h"
#include "shim/windows/compile_watch.h"
#include "shim/windows/runtime.h"
#include "store/windows/wide.h"

namespace nvrtc_cache::shim::hooks {
namespace {

using windows::WindowsRuntime;
using Clock = std::chrono::steady_clock;

// The environment variables nvrtc64_130_0.dll's getenv may read.
constexpr const char* kCrtVariables[] = {
#define NVRTC_CACHE_CRT_VARIABLE(name) #name,
#include "shim/windows/crt_environment.def"
#undef NVRTC_CACHE_CRT_VARIABLE
};

std::int64_t nanos_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// Keeps the thread's last-error value across the proxy's own work.
class LastErrorGuard {
 public:
  LastErrorGuard() : saved_(GetLastError()) {}
  ~LastErrorGuard() { SetLastError(saved_); }
  void set(DWORD value) { saved_ = value; }
  LastErrorGuard(const LastErrorGuard&) = delete;
  LastErrorGuard& operator=(const LastErrorGuard&) = delete;

 private:
  DWORD saved_;
};

bool has_side_effects(std::string_view option) {
  while (!option.empty() && option.front() == '-') option.remove_prefix(1);
  for (std::string_view name : {"create-pch", "use-pch", "pch", "time", "fdevice-time-trace"}) {
    if (option == name || (option.starts_with(name) && (option[name.size()] == '=' || option[name.size()] == '-'))) {
      return true;
    }
  }
  return false;
}

std::string reason_not_cacheable(const ProgramRecord& record, int num_options, const char* const* options) {
  if (!record.capturable) return "its inputs could not be captured";
  if (record.has_flow_callback) return "it has a flow callback";
  if (num_options < 0 || (num_options > 0 && options == nullptr)) return "invalid option list";
  for (int i = 0; i < num_options; ++i) {
    if (options[i] == nullptr) return "a NULL option";
    if (has_side_effects(options[i])) return std::string("option ") + options[i] + " has side effects";
  }
  return {};
}

bool result_is_cacheable(nvrtcResult rc) {
  return rc == NVRTC_SUCCESS || rc == NVRTC_ERROR_COMPILATION || rc == NVRTC_ERROR_INVALID_OPTION;
}

std::string current_working_directory() {
  std::wstring dir(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetCurrentDirectoryW(static_cast<DWORD>(dir.size()), dir.data());
    if (n == 0) return "(unknown)";
    if (n < dir.size()) {
      dir.resize(n);
      return store::windows::to_utf8(dir);
    }
    dir.resize(n);
  }
}

void record_compile_context(ProgramRecord& record, int n, const char* const* options) {
  record.inputs.options.assign(options, options + n);
  record.inputs.working_directory = current_working_directory();
  record.inputs.pwd_variable.reset();  // no $PWD convention on Windows
  const auto append_flags = store::windows::environment_variable(L"NVRTC_APPEND_FLAGS");
  record.inputs.working_directory_use = keying::working_directory_use(
      record.inputs.options, record.inputs.name,
      append_flags ? std::optional<std::string_view>(*append_flags) : std::nullopt);
}

direct::TimeMacros time_macros_in(const keying::ProgramInputs& inputs) {
  direct::TimeMacros uses = direct::scan_time_macros(inputs.source);
  for (const auto& h : inputs.headers) {
    const direct::TimeMacros m = direct::scan_time_macros(h.content);
    uses.time = uses.time || m.time;
    uses.date = uses.date || m.date;
  }
  return uses;
}

struct Lookup {
  std::optional<core::CompileEntry> entry;
  std::string miss_reason;
};

Lookup look_up(store::Store& store, const keying::CacheKey& direct_key) {
  Lookup out;
  const std::string manifest_key = direct::manifest_store_key(direct_key);
  std::optional<std::string> bytes = store.get(manifest_key);
  if (!bytes) {
    out.miss_reason = "no manifest";
    return out;
  }
  std::optional<direct::Manifest> manifest = direct::decode_manifest(*bytes);
  if (!manifest) {
    WindowsRuntime::instance().stats().add(core::Counter::corrupt);
    (void)store.erase(manifest_key);
    out.miss_reason = "the manifest was corrupt";
    return out;
  }
  for (direct::ManifestResult& result : manifest->results) {
    const direct::Validation v = direct::validate_dependencies(result.dependencies);
    if (!v.matches) {
      if (out.miss_reason.empty()) out.miss_reason = v.mismatch;
      continue;
    }
    const std::string key = direct::result_store_key(result.result_key);
    std::optional<std::string> entry_bytes = store.get(key);
    if (!entry_bytes) {
      if (out.miss_reason.empty()) out.miss_reason = "the result is gone from the store";
      continue;
    }
    out.entry = core::decode_entry(*entry_bytes);
    if (!out.entry) {
      WindowsRuntime::instance().stats().add(core::Counter::corrupt);
      (void)store.erase(key);
      continue;
    }
    if (v.refreshed) (void)store.put(manifest_key, direct::encode_manifest(*manifest));
    out.miss_reason.clear();
    return out;
  }
  if (out.miss_reason.empty()) out.miss_reason = "no result in the manifest";
  return out;
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
      const auto value = store::windows::environment_variable(store::windows::to_wide(name));
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
    return;
  }
  if (store == nullptr) {
    stats.add(core::Counter::errors);
    return;
  }
  std::optional<core::CompileEntry> entry = capture_outputs(real, prog, record.inputs);
  if (entry) entry->compile_rc = rc;
  if (!entry || !core::is_well_formed(*entry)) {
    stats.add(core::Counter::uncacheable);
    stats.add(core::Counter::uncacheable_output);
    return;
  }
  entry->compile_nanos = static_cast<std::uint64_t>(compile_nanos);
  core::EntryDescription& description = entry->description.emplace();
  description.program_name = record.inputs.name.value_or("");
  description.options = record.inputs.options;
  for (const auto& header : record.inputs.headers) description.header_names.push_back(header.include_name);
  description.source_bytes = record.inputs.source.size();
  stats.add(core::Counter::misses);
  stats.add(miss_reason);
  stats.add(core::Counter::compile_ns, compile_nanos);

  const keying::CacheKey result = direct::result_key(direct_key, *dependencies.set);
  store::Status status = store->put(direct::result_store_key(result), core::encode_entry(*entry));
  if (status) {
    const std::string manifest_key = direct::manifest_store_key(direct_key);
    direct::Manifest manifest;
    if (std::optional<std::string> bytes = store->get(manifest_key)) {
      manifest = direct::decode_manifest(*bytes).value_or(direct::Manifest{});
    }
    for (const keying::CacheKey& dropped : manifest.add({result, std::move(*dependencies.set)})) {
      (void)store->erase(direct::result_store_key(dropped));
    }
    status = store->put(manifest_key, direct::encode_manifest(manifest));
  }
  stats.add(status ? core::Counter::stores : core::Counter::errors);
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
    Lookup found = look_up(*store, key);
    if (found.entry) {
      const nvrtcResult rc = static_cast<nvrtcResult>(found.entry->compile_rc);
      const auto saved = static_cast<std::int64_t>(found.entry->compile_nanos);
      record.served = std::make_shared<const core::CompileEntry>(std::move(*found.entry));
      const auto replayed = Clock::now();
      runtime.stats().add(core::Counter::hits);
      runtime.stats().add(core::Counter::hit_keying_ns, nanos_between(started, keyed));
      runtime.stats().add(core::Counter::hit_lookup_ns, nanos_between(keyed, replayed));
      runtime.stats().add(core::Counter::saved_ns, std::max<std::int64_t>(0, saved - nanos_between(started, replayed)));
      return rc;
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
  if (rc != NVRTC_SUCCESS || prog == nullptr || *prog == nullptr || !WindowsRuntime::instance().enabled()) return rc;
  LastErrorGuard last_error;
  try {
    auto record = std::make_shared<ProgramRecord>();
    record->inputs.library = WindowsRuntime::instance().identity(real);
    if (name) record->inputs.name = name;
    record->inputs.source = src;
    if (num_headers > 0 && (headers == nullptr || include_names == nullptr)) {
      record->capturable = false;
    } else {
      for (int i = 0; i < num_headers; ++i) {
        if (headers[i] == nullptr || include_names[i] == nullptr) {
          record->capturable = false;
          break;
        }
        record->inputs.headers.push_back({include_names[i], headers[i]});
      }
    }
    program_table().insert(*prog, std::move(record));
  } catch (...) {
    program_table().erase(*prog);  // an unrecorded program simply passes through
  }
  return rc;
}

nvrtcResult nvrtcDestroyProgram(const interpose::RealNvrtc& real, nvrtcProgram* prog) {
  if (prog != nullptr && *prog != nullptr) {
    LastErrorGuard last_error;
    program_table().erase(*prog);
  }
  return real.nvrtcDestroyProgram(prog);
}

nvrtcResult nvrtcAddNameExpression(const interpose::RealNvrtc& real, nvrtcProgram prog,
                                   const char* const name_expression) {
  auto record = program_table().find(prog);
  if (record && record->served) {
    return name_expression == nullptr ? NVRTC_ERROR_INVALID_INPUT : NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION;
  }
  const nvrtcResult rc = real.nvrtcAddNameExpression(prog, name_expression);
  if (rc == NVRTC_SUCCESS && record) {
    LastErrorGuard last_error;
    try {
      record->inputs.name_expressions.emplace_back(name_expression);
    } catch (...) {
      record->capturable = false;
    }
  }
  return rc;
}

nvrtcResult nvrtcSetFlowCallback(const interpose::RealNvrtc& real, nvrtcProgram prog, int (*callback)(void*, void*),
                                 void* payload) {
  const nvrtcResult rc = real.nvrtcSetFlowCallback(prog, callback, payload);
  if (rc == NVRTC_SUCCESS) {
    if (auto record = program_table().find(prog)) record->has_flow_callback = record->has_flow_callback || callback;
  }
  return rc;
}

nvrtcResult nvrtcCompileProgram(const interpose::RealNvrtc& real, nvrtcProgram prog, int num_options,
                                const char* const* options) {
  WindowsRuntime& runtime = WindowsRuntime::instance();
  std::shared_ptr<ProgramRecord> record = runtime.enabled() ? program_table().find(prog) : nullptr;
  if (!record) return real.nvrtcCompileProgram(prog, num_options, options);
  LastErrorGuard last_error;
  try {
    std::string why_not = reason_not_cacheable(*record, num_options, options);
    if (why_not.empty() && !runtime.watch_installed()) why_not = "NVRTC's file accesses are not observable here (capture)";
    nvrtcResult rc;
    if (!why_not.empty()) {
      runtime.stats().add(core::Counter::uncacheable);
      runtime.stats().add(core::uncacheable_reason(why_not));
      record->served.reset();
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
