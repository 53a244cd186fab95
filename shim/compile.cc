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
#include "shim/compile_steps.h"
#include "shim/hooks.h"
#include "shim/program_table.h"
#include "shim/record_writer.h"
#include "shim/runtime.h"
#include "shim/watch/file_watch.h"
#include "platform/fork_locks.h"
#include "shim/single_flight.h"
#include "util/clock.h"
#include "platform/errno_guard.h"

namespace nvrtc_cache::shim::hooks {
namespace {

using Clock = SteadyClock;
using platform::ErrnoGuard;

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

// Environment variables NVRTC has read in any compile of this process (some it reads only once).
// Its mutex is platform::ForkRank::kVariablesSeen.
class VariablesSeen {
 public:
  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child() { platform::renew_in_child(mu_); }
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
  platform::join_fork_order_of<&variables_seen>(platform::ForkRank::kVariablesSeen);
}

// The variables recorded as dependencies of every result: those NVRTC has read in any compile of this
// process, and for NVRTC 12.9 on CUDA_CACHE_DISABLE, which turns NVRTC's own cache off (a hit of that
// cache leaves ptxas's -v lines out of the log: docs/nvrtc-versions.md). NVRTC reads it once per
// process, where the watch does not see it; recorded, set or not, a result stored with NVRTC's cache
// on is never served to a process that turned it off.
std::vector<std::string> variables_always_recorded(const keying::LibraryIdentity& library) {
  std::vector<std::string> names = variables_seen().snapshot();
  if ((library.major == 12 && library.minor >= 9) || library.major > 12) {
    if (std::find(names.begin(), names.end(), "CUDA_CACHE_DISABLE") == names.end()) {
      names.emplace_back("CUDA_CACHE_DISABLE");
    }
  }
  return names;
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

// An unknown option is named once (at info: most are options NVRTC itself rejects); a newer NVRTC
// than this build knows, which stops all caching of it, is said once at the default level.
void log_not_cacheable(const interpose::RealNvrtc& real, const NotCacheable& why) {
  if (why.reason == core::Counter::uncacheable_unknown_option) {
    core::log_once(core::LogLevel::kInfo, "unknown-option:" + why.why,
                   "not caching compiles with an option this build does not know: " + why.why);
  } else if (why.reason == core::Counter::uncacheable_unknown_function) {
    std::string names;
    for (const std::string& name : real.unknown_functions) names += (names.empty() ? "" : ", ") + name;
    core::log_once(core::LogLevel::kWarn, "unknown-functions:" + real.identity.build_id,
                   "NVRTC " + std::to_string(real.identity.major) + "." + std::to_string(real.identity.minor) +
                       " exports functions this build does not know (" + names +
                       "); its compiles are passed through uncached");
  }
}

nvrtcResult compile_uncached(const interpose::RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog, int n,
                             const char* const* options, const NotCacheable& why) {
  Runtime& runtime = Runtime::instance();
  runtime.stats().add(core::Counter::uncacheable);
  runtime.stats().add(why.reason);
  log_not_cacheable(real, why);
  core::log_debug([&] { return "uncacheable compile: " + why.why; });
  materialize_served(real, record, prog);
  const nvrtcResult rc = real.nvrtcCompileProgram(prog, n, options);
  const int compile_errno = errno;
  (void)runtime.store();  // statistics are kept in the store, shared by every process
  runtime.flush_stats(false);
  errno = compile_errno;
  return rc;
}

void log_corrupt_entry() {
  core::log_once(core::LogLevel::kWarn, "corrupt-entry", "a cache entry failed verification; dropped and recompiled");
}

nvrtcResult serve(ProgramRecord& record, const keying::CacheKey& direct_key, core::CompileEntry entry,
                  Clock::time_point started, Clock::time_point keyed, Clock::time_point looked_up,
                  std::int64_t validate_ns, std::int64_t wait_ns = 0) {
  Runtime& runtime = Runtime::instance();
  const nvrtcResult rc =
      serve_hit(record, std::move(entry), started, keyed, looked_up, validate_ns, wait_ns, runtime.stats());
  core::log_debug([&] { return "hit " + keying::to_hex(direct_key); });
  runtime.flush_stats(false);
  return rc;
}

// "3 files read, 12 paths probed, 2 environment variables", for the debug log.
std::string summary_of(const direct::DependencySet& dependencies) {
  const std::size_t files = static_cast<std::size_t>(
      std::count_if(dependencies.paths.begin(), dependencies.paths.end(), [](const auto& p) { return p.content; }));
  return std::to_string(files) + " files read, " + std::to_string(dependencies.paths.size() - files) +
         " paths probed, " + std::to_string(dependencies.env.size()) + " environment variables";
}

// Stores the result under its result key and adds it to the direct key's manifest.
void store_result(store::Store& store, const interpose::RealNvrtc& real, nvrtcProgram prog,
                  const ProgramRecord& record, const keying::CacheKey& direct_key, direct::DependencySet dependencies,
                  nvrtcResult compile_rc, std::int64_t compile_nanos, core::Counter miss_reason) {
  Runtime& runtime = Runtime::instance();
  const std::string summary = summary_of(dependencies);
  std::size_t results = 0;
  const std::optional<store::Status> status =
      shim::store_result(store, real, prog, record, direct_key, std::move(dependencies), compile_rc, compile_nanos,
                         miss_reason, runtime.stats(), &results);
  if (!status) {
    core::log_line(core::LogLevel::kDebug, "uncacheable compile: an output could not be read back exactly");
    return;
  }
  if (*status) {
    core::log_debug([&] {
      return "stored " + keying::to_hex(direct_key) + ": " + summary + " (" + std::to_string(results) +
             " results in its manifest)";
    });
  } else {
    core::log_once(core::LogLevel::kWarn, "store-put",
                   "could not write to the cache (" + status->message() + "); compiling without storing");
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
                                               variables_always_recorded(record.inputs.library),
                                               record.inputs.working_directory_use);
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
    Lookup found = look_up(*store, key, real, runtime.stats(), &log_corrupt_entry);
    if (!found.entry && !runtime.store_read_only()) {
      flight = claim_or_wait(key, [&] {
        return (found = look_up(*store, key, real, runtime.stats(), &log_corrupt_entry)).entry.has_value();
      });
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
  return record_created_program<ErrnoGuard>(rc, prog, Runtime::instance().enabled(), [&] { return real.identity; }, src,
                                            name, num_headers, headers, include_names);
}

nvrtcResult nvrtcCompileProgram(const interpose::RealNvrtc& real, nvrtcProgram prog, int num_options,
                                const char* const* options) {
  Runtime& runtime = Runtime::instance();
  std::shared_ptr<ProgramRecord> record = runtime.enabled() ? program_table().find(prog) : nullptr;
  if (!record) return real.nvrtcCompileProgram(prog, num_options, options);
  ErrnoGuard errno_guard;
  try {
    const char* append_flags = std::getenv("NVRTC_APPEND_FLAGS");
    const std::optional<NotCacheable> why_not =
        reason_not_cacheable(real, *record, num_options, options,
                             append_flags ? std::optional<std::string_view>(append_flags) : std::nullopt);
    if (why_not) {
      const nvrtcResult rc = compile_uncached(real, *record, prog, num_options, options, *why_not);
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
