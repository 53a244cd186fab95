// The program lifecycle hooks: create, add name expression, flow callback, compile, destroy.
// Data flows one way: capture the inputs here -> keying -> store -> replay (shim/replay.cc).
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/log.h"
#include "core/stats.h"
#include "direct/dependencies.h"
#include "direct/manifest.h"
#include "keying/cache_key.h"
#include "shim/capture.h"
#include "shim/hooks.h"
#include "shim/program_table.h"
#include "shim/record_writer.h"
#include "shim/runtime.h"
#include "shim/watch/file_watch.h"
#include "store/fork_locks.h"
#include "shim/single_flight.h"
#include "util/clock.h"
#include "util/errno_guard.h"

namespace nvrtc_cache::shim::hooks {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nanos_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

using util::ErrnoGuard;

// Options whose effect is not captured by the result: they write files or use precompiled headers.
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

// Objects whose file accesses during a compile are the driver's own cache, not compile inputs.
bool is_driver_object(const void* caller) {
  Dl_info info;
  if (caller == nullptr || dladdr(caller, &info) == 0 || info.dli_fname == nullptr) return false;
  const std::string_view file = info.dli_fname;
  return file.find("libcuda.so") != std::string_view::npos || file.find("libnvidia-") != std::string_view::npos;
}

std::vector<direct::Observation> observations_of(const watch::CompileWatch& watch) {
  std::vector<direct::Observation> out;
  out.reserve(watch.event_count());
  watch.for_each_event([&out](const watch::WatchEvent& e) {
    if (!is_driver_object(e.caller)) out.push_back(e.observation);
  });
  return out;
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

// Environment variables NVRTC has read in any compile of this process (some it reads only once).
// Its mutex is store::ForkRank::kVariablesSeen.
class VariablesSeen {
 public:
  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child() { store::renew_in_child(mu_); }
  std::vector<std::string> snapshot() {
    std::lock_guard lock(mu_);
    return {names_.begin(), names_.end()};
  }
  void add(const direct::DependencySet& set) {
    std::lock_guard lock(mu_);
    for (const auto& e : set.env) names_.insert(e.name);
  }

 private:
  std::mutex mu_;
  std::set<std::string> names_;
};

VariablesSeen& variables_seen() {
  static auto* seen = new VariablesSeen();  // leaked: usable from exit handlers
  return *seen;
}

__attribute__((constructor)) void register_fork_locks() {
  store::join_fork_order_of<&variables_seen>(store::ForkRank::kVariablesSeen);
}

std::string current_working_directory() {
  std::string dir(256, '\0');
  while (getcwd(dir.data(), dir.size()) == nullptr) {
    if (errno != ERANGE) return "(unknown: " + std::to_string(errno) + ")";
    dir.resize(dir.size() * 2);
  }
  dir.resize(std::strlen(dir.c_str()));
  return dir;
}

bool result_is_cacheable(nvrtcResult rc) {
  return rc == NVRTC_SUCCESS || rc == NVRTC_ERROR_COMPILATION || rc == NVRTC_ERROR_INVALID_OPTION;
}

nvrtcResult compile_uncached(const interpose::RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog, int n,
                             const char* const* options, std::string_view why) {
  Runtime& runtime = Runtime::instance();
  runtime.stats().add(core::Counter::uncacheable);
  runtime.stats().add(core::uncacheable_reason(why));
  core::log_debug([&] { return "uncacheable compile: " + std::string(why); });
  record.served.reset();
  const nvrtcResult rc = real.nvrtcCompileProgram(prog, n, options);
  const int compile_errno = errno;
  (void)runtime.store();  // statistics are kept in the store, shared by every process
  runtime.flush_stats(false);
  errno = compile_errno;
  return rc;
}

std::optional<core::CompileEntry> decode_or_drop(store::Store& store, const std::string& key, std::string_view bytes) {
  std::optional<core::CompileEntry> entry = core::decode_entry(bytes);
  if (!entry) {
    Runtime::instance().stats().add(core::Counter::corrupt);
    core::log_once(core::LogLevel::kWarn, "corrupt-entry", "a cache entry failed verification; dropped and recompiled");
    (void)store.erase(key);
  }
  return entry;
}

struct Lookup {
  std::optional<core::CompileEntry> entry;
  std::optional<direct::DependencySet> dependencies;  // the served result's (for NVRTC_CACHE_RECORD)
  std::string miss_reason;
  std::int64_t validate_ns = 0;
};

// The direct key names a manifest; the first result whose dependencies still hold is the answer.
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
    Runtime::instance().stats().add(core::Counter::corrupt);
    (void)store.erase(manifest_key);
    out.miss_reason = "the manifest was corrupt";
    return out;
  }
  for (direct::ManifestResult& result : manifest->results) {
    const auto validate_start = Clock::now();
    const direct::Validation v = direct::validate_dependencies(result.dependencies);
    out.validate_ns += nanos_between(validate_start, Clock::now());
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
    out.entry = decode_or_drop(store, key, *entry_bytes);
    if (!out.entry) continue;
    if (v.refreshed) (void)store.put(manifest_key, direct::encode_manifest(*manifest));  // touched files
    out.dependencies = std::move(result.dependencies);
    out.miss_reason.clear();
    return out;
  }
  if (out.miss_reason.empty()) out.miss_reason = "no result in the manifest";
  return out;
}

nvrtcResult serve(ProgramRecord& record, const keying::CacheKey& direct_key, core::CompileEntry entry,
                  Clock::time_point started, Clock::time_point keyed, Clock::time_point looked_up,
                  std::int64_t validate_ns, std::int64_t wait_ns = 0) {
  Runtime& runtime = Runtime::instance();
  const nvrtcResult rc = static_cast<nvrtcResult>(entry.compile_rc);
  const std::int64_t saved = static_cast<std::int64_t>(entry.compile_nanos);
  record.served = std::make_shared<const core::CompileEntry>(std::move(entry));
  const auto replayed = Clock::now();
  auto& stats = runtime.stats();
  stats.add(core::Counter::hits);
  stats.add(core::Counter::hit_keying_ns, nanos_between(started, keyed));
  // A wait for another compile's result is counted in wait_ns (the last validation falls inside it).
  stats.add(core::Counter::hit_lookup_ns,
            std::max<std::int64_t>(0, nanos_between(keyed, looked_up) - validate_ns - wait_ns));
  stats.add(core::Counter::hit_validate_ns, validate_ns);
  stats.add(core::Counter::hit_replay_ns, nanos_between(looked_up, replayed));
  stats.add(core::Counter::saved_ns, std::max<std::int64_t>(0, saved - nanos_between(started, replayed)));
  core::log_debug([&] { return "hit " + keying::to_hex(direct_key); });
  runtime.flush_stats(false);
  return rc;
}

// The compile's outputs read back from NVRTC, or nullopt (counted and logged) if any cannot be
// read back exactly (e.g. a return code newer than this build knows).
std::optional<core::CompileEntry> entry_to_store(const interpose::RealNvrtc& real, nvrtcProgram prog,
                                                 const ProgramRecord& record, nvrtcResult compile_rc,
                                                 std::int64_t compile_nanos) {
  std::optional<core::CompileEntry> entry = capture_outputs(real, prog, record.inputs);
  if (entry) entry->compile_rc = compile_rc;
  if (!entry || !core::is_well_formed(*entry)) {
    Runtime::instance().stats().add(core::Counter::uncacheable);
    Runtime::instance().stats().add(core::Counter::uncacheable_output);
    core::log_line(core::LogLevel::kDebug, "uncacheable compile: an output could not be read back exactly");
    return std::nullopt;
  }
  entry->compile_nanos = static_cast<std::uint64_t>(compile_nanos);
  core::EntryDescription& description = entry->description.emplace();
  description.program_name = record.inputs.name.value_or("");
  description.options = record.inputs.options;
  for (const auto& header : record.inputs.headers) description.header_names.push_back(header.include_name);
  description.source_bytes = record.inputs.source.size();
  return entry;
}

// "3 files read, 12 paths probed, 2 environment variables", for the debug log.
std::string summary_of(const direct::DependencySet& dependencies) {
  const std::size_t files = static_cast<std::size_t>(
      std::count_if(dependencies.paths.begin(), dependencies.paths.end(), [](const auto& p) { return p.content; }));
  return std::to_string(files) + " files read, " + std::to_string(dependencies.paths.size() - files) +
         " paths probed, " + std::to_string(dependencies.env.size()) + " environment variables";
}

// Adds `result` to the direct key's manifest (erasing the results it displaces) and writes it back.
store::Status add_to_manifest(store::Store& store, const keying::CacheKey& direct_key, const keying::CacheKey& result,
                              direct::DependencySet dependencies) {
  const std::string manifest_key = direct::manifest_store_key(direct_key);
  direct::Manifest manifest;
  if (std::optional<std::string> bytes = store.get(manifest_key)) {
    manifest = direct::decode_manifest(*bytes).value_or(direct::Manifest{});
  }
  const std::string summary = summary_of(dependencies);
  for (const keying::CacheKey& dropped : manifest.add({result, std::move(dependencies)})) {
    (void)store.erase(direct::result_store_key(dropped));
  }
  store::Status status = store.put(manifest_key, direct::encode_manifest(manifest));
  if (status) {
    core::log_debug([&] {
      return "stored " + keying::to_hex(direct_key) + ": " + summary + " (" + std::to_string(manifest.results.size()) +
             " results in its manifest)";
    });
  }
  return status;
}

// Stores the result under its result key and adds it to the direct key's manifest.
void store_result(store::Store& store, const interpose::RealNvrtc& real, nvrtcProgram prog,
                  const ProgramRecord& record, const keying::CacheKey& direct_key, direct::DependencySet dependencies,
                  nvrtcResult compile_rc, std::int64_t compile_nanos, core::Counter miss_reason) {
  Runtime& runtime = Runtime::instance();
  std::optional<core::CompileEntry> entry = entry_to_store(real, prog, record, compile_rc, compile_nanos);
  if (!entry) return;
  runtime.stats().add(core::Counter::misses);
  runtime.stats().add(miss_reason);
  runtime.stats().add(core::Counter::compile_ns, compile_nanos);

  const keying::CacheKey result = direct::result_key(direct_key, dependencies);
  store::Status status = store.put(direct::result_store_key(result), core::encode_entry(*entry));
  if (status) status = add_to_manifest(store, direct_key, result, std::move(dependencies));
  if (status) {
    runtime.stats().add(core::Counter::stores);
  } else {
    runtime.stats().add(core::Counter::errors);
    core::log_once(core::LogLevel::kWarn, "store-put",
                   "could not write to the cache (" + status.message() + "); compiling without storing");
  }
  runtime.flush_stats(true);
}

// The inputs only known at compile time: the options, the working directory and $PWD.
void record_compile_context(ProgramRecord& record, int n, const char* const* options) {
  record.inputs.options.assign(options, options + n);
  record.inputs.working_directory = current_working_directory();
  if (const char* pwd = std::getenv("PWD")) {
    record.inputs.pwd_variable = pwd;
  } else {
    record.inputs.pwd_variable.reset();
  }
  const char* append_flags = std::getenv("NVRTC_APPEND_FLAGS");  // NVRTC appends them to the options
  record.inputs.working_directory_use = keying::working_directory_use(
      record.inputs.options, record.inputs.name,
      append_flags ? std::optional<std::string_view>(append_flags) : std::nullopt);
}

// The real compile, with NVRTC's libc calls recorded into `watch`.
struct WatchedCompile {
  nvrtcResult rc = NVRTC_SUCCESS;
  int errno_after = 0;
  std::int64_t start_realtime_ns = 0;  // for "modified during the compile"
  std::int64_t nanos = 0;
};

WatchedCompile compile_watched(const interpose::RealNvrtc& real, nvrtcProgram prog, int n, const char* const* options,
                               watch::CompileWatch& watch) {
  WatchedCompile out;
  out.start_realtime_ns = util::realtime_ns();
  const auto start = Clock::now();
  out.rc = real.nvrtcCompileProgram(prog, n, options);
  const auto end = Clock::now();
  watch.stop();
  out.errno_after = errno;
  out.nanos = nanos_between(start, end);
  return out;
}

// What the compile depended on, from what the watch saw; no set when it must not be stored.
direct::RecordedDependencies dependencies_of(const watch::CompileWatch& watch, const WatchedCompile& compile,
                                             const ProgramRecord& record) {
  direct::RecordedDependencies dependencies;
  if (!result_is_cacheable(compile.rc)) {
    dependencies.why_not = "NVRTC returned " + std::to_string(compile.rc);
  } else if (watch.tainted()) {
    dependencies.why_not = watch.why_tainted();
  } else if (watch.event_count() == 0) {
    // NVRTC probes the working directory in every compile; seeing nothing means its libc calls do
    // not reach the shim here (e.g. it was loaded in a scope that bypasses the interposers), so
    // its file reads cannot be tracked.
    dependencies.why_not = "NVRTC's file accesses are not observable in this process";
    core::log_once(core::LogLevel::kWarn, "unobservable",
                   "NVRTC's file accesses are not observable in this process; compiles are not cached");
  } else {
    dependencies = direct::record_dependencies(observations_of(watch), record.inputs.working_directory,
                                               compile.start_realtime_ns, time_macros_in(record.inputs),
                                               variables_seen().snapshot(), record.inputs.working_directory_use);
    if (dependencies.set) variables_seen().add(*dependencies.set);
  }
  return dependencies;
}

// After a miss: stores the result if it can be (and the cache is writable), counting the outcome.
void keep_result(store::Store* store, const interpose::RealNvrtc& real, nvrtcProgram prog,
                 const ProgramRecord& record, const keying::CacheKey& key, direct::RecordedDependencies dependencies,
                 const WatchedCompile& compile, core::Counter miss_reason) {
  Runtime& runtime = Runtime::instance();
  if (!dependencies.set) {
    runtime.stats().add(core::Counter::uncacheable);
    runtime.stats().add(core::uncacheable_reason(dependencies.why_not));
    core::log_debug([&] { return "uncacheable compile: " + dependencies.why_not; });
    runtime.flush_stats(false);
  } else if (store && runtime.store_read_only()) {
    runtime.stats().add(core::Counter::misses);  // a read-only cache stores nothing (said once at open)
    runtime.stats().add(miss_reason);
  } else if (store) {
    try {
      store_result(*store, real, prog, record, key, std::move(*dependencies.set), compile.rc, compile.nanos,
                   miss_reason);
    } catch (...) {  // the real compile stands; only the caching failed
      runtime.stats().add(core::Counter::errors);
      core::log_once(core::LogLevel::kError, "store-exception", "internal error while storing a result; not cached");
    }
  } else {
    runtime.stats().add(core::Counter::errors);
  }
}

// Key, look up, and serve a hit; on a miss, compile under the watch and keep the result.
nvrtcResult compile_through_cache(const interpose::RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog, int n,
                                  const char* const* options) {
  Runtime& runtime = Runtime::instance();
  const auto started = Clock::now();
  record_compile_context(record, n, options);
  const keying::CacheKey key = keying::compute_key(record.inputs);
  store::Store* store = runtime.store();
  const auto keyed = Clock::now();

  std::string miss_reason = "the cache is unavailable";
  ClaimAttempt flight;  // a held claim makes other compiles of this key wait for our result; released at return
  if (store) {
    Lookup found = look_up(*store, key);
    if (!found.entry && !runtime.store_read_only()) {
      flight = claim_or_wait(key, [&] { return (found = look_up(*store, key)).entry.has_value(); });
    }
    if (found.entry) {
      const nvrtcResult rc = serve(record, key, std::move(*found.entry), started, keyed, Clock::now(),
                                   found.validate_ns, flight.wait_ns);
      const std::string& record_file = runtime.config().record_file;
      if (!record_file.empty() && found.dependencies) {
        append_compile_record(record_file, real, record, *found.dependencies);
      }
      return rc;
    }
    miss_reason = std::move(found.miss_reason);
  }
  core::log_debug([&] { return "miss " + keying::to_hex(key) + ": " + miss_reason; });

  record.served.reset();
  watch::CompileWatch watch(reinterpret_cast<const void*>(real.nvrtcCompileProgram));
  const WatchedCompile compile = compile_watched(real, prog, n, options, watch);
  direct::RecordedDependencies dependencies = dependencies_of(watch, compile, record);
  const std::string& record_file = runtime.config().record_file;
  if (!record_file.empty() && dependencies.set) append_compile_record(record_file, real, record, *dependencies.set);
  keep_result(store, real, prog, record, key, std::move(dependencies), compile, core::miss_reason(miss_reason));
  errno = compile.errno_after;
  return compile.rc;
}

}  // namespace

nvrtcResult nvrtcCreateProgram(const interpose::RealNvrtc& real, nvrtcProgram* prog, const char* src, const char* name,
                               int num_headers, const char* const* headers, const char* const* include_names) {
  const nvrtcResult rc = real.nvrtcCreateProgram(prog, src, name, num_headers, headers, include_names);
  if (rc != NVRTC_SUCCESS || prog == nullptr || *prog == nullptr || !Runtime::instance().enabled()) return rc;
  ErrnoGuard errno_guard;
  try {
    auto record = std::make_shared<ProgramRecord>();
    record->inputs.library = real.identity;
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
    // Before the real destroy: afterwards NVRTC may hand the same address to another thread's program.
    ErrnoGuard errno_guard;
    program_table().erase(*prog);
  }
  return real.nvrtcDestroyProgram(prog);
}

nvrtcResult nvrtcAddNameExpression(const interpose::RealNvrtc& real, nvrtcProgram prog,
                                   const char* const name_expression) {
  auto record = program_table().find(prog);
  if (record && record->served) {
    // NVRTC's answer for a program it has compiled.
    return name_expression == nullptr ? NVRTC_ERROR_INVALID_INPUT : NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION;
  }
  const nvrtcResult rc = real.nvrtcAddNameExpression(prog, name_expression);
  if (rc == NVRTC_SUCCESS && record) {
    ErrnoGuard errno_guard;
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
  Runtime& runtime = Runtime::instance();
  std::shared_ptr<ProgramRecord> record = runtime.enabled() ? program_table().find(prog) : nullptr;
  if (!record) return real.nvrtcCompileProgram(prog, num_options, options);
  ErrnoGuard errno_guard;
  try {
    const std::string why_not = reason_not_cacheable(*record, num_options, options);
    if (!why_not.empty()) {
      const nvrtcResult rc = compile_uncached(real, *record, prog, num_options, options, why_not);
      errno_guard.set(errno);
      return rc;
    }
    const nvrtcResult rc = compile_through_cache(real, *record, prog, num_options, options);
    errno_guard.set(errno);
    return rc;
  } catch (...) {
    // Fail open. If the real compile already ran, its results stand; this path is reached only
    // before it (allocation failures while keying or looking up).
    runtime.stats().add(core::Counter::errors);
    core::log_once(core::LogLevel::kError, "compile-exception", "internal error; compiling without the cache");
    record->served.reset();
    const nvrtcResult rc = real.nvrtcCompileProgram(prog, num_options, options);
    errno_guard.set(errno);
    return rc;
  }
}

}  // namespace nvrtc_cache::shim::hooks
