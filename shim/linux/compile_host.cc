// The Linux shim's program hooks: create and compile (the lifecycle is shim/lifecycle/compile_lifecycle.h's;
// this file is its Linux host: the libc watch, single-flight claims, compile records).
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
#include "libraries/nvrtc/bundled_headers.h"
#include "shim/call_report.h"
#include "libraries/nvrtc/capture.h"
#include "shim/lifecycle/compile_lifecycle.h"
#include "libraries/nvrtc/compile_steps.h"
#include "libraries/nvrtc/hooks.h"
#include "shim/interpose/loaded_object.h"
#include "libraries/nvrtc/program_table.h"
#include "shim/record_writer.h"
#include "shim/runtime.h"
#include "shim/watch/file_watch.h"
#include "shim/watch/observations.h"
#include "platform/fork_locks.h"
#include "shim/flight/runtime_flight.h"
#include "shim/flight/single_flight.h"
#include "util/clock.h"
#include "platform/env.h"
#include "platform/errno_guard.h"

namespace nvrtc_cache::shim::hooks {
namespace {

using platform::ErrnoGuard;

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

std::optional<std::string> environment_variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

// The Linux shim's part of the lifecycle: the Runtime's store and statistics, the libc watch,
// single-flight claims and compile records (NVRTC_CACHE_RECORD).
class LinuxCompileHost final : public CompileHost {
 public:
  store::Store* store() override { return runtime_.store(); }
  bool store_read_only() override { return runtime_.store_read_only(); }
  core::StatsDeltas& stats() override { return runtime_.stats(); }
  int compression_level() override { return runtime_.config().compression_level; }
  std::optional<std::string> append_flags() override { return environment_variable("NVRTC_APPEND_FLAGS"); }
  CompileContext compile_context() override {
    return {platform::Env::system()->current_directory().value_or("(unknown)"), environment_variable("PWD"),
            environment_variable("NVRTC_APPEND_FLAGS")};
  }
  int error_state() override { return errno; }

  Flight claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready) override {
    return as_flight(shim::claim_or_wait(key, result_ready));
  }

  ObservedCompile compile_observed(const interpose::RealNvrtc& real, nvrtcProgram prog, int n,
                                   const char* const* options, const ProgramRecord& record) override {
    watch::CompileWatch watch(reinterpret_cast<const void*>(real.nvrtcCompileProgram));
    ObservedCompile out;
    const std::int64_t start_realtime_ns = util::realtime_ns();
    const auto start = SteadyClock::now();
    out.rc = real.nvrtcCompileProgram(prog, n, options);
    const auto end = SteadyClock::now();
    watch.stop();
    out.error_after = errno;
    out.nanos = nanos_between(start, end);
    try {
      out.dependencies = dependencies_of(watch, start_realtime_ns, record);
    } catch (...) {
      out.internal_error = true;  // the result stands, uncached
    }
    errno = out.error_after;
    return out;
  }

  void compile_recorded(const interpose::RealNvrtc& real, const ProgramRecord& record,
                        const direct::DependencySet& dependencies) override {
    const std::string& record_file = runtime_.config().record_file;
    if (record_file.empty()) return;
    append_compile_record(record_file,
                          interpose::library_path_of(real.link_map, reinterpret_cast<const void*>(real.nvrtcVersion)),
                          record, dependencies);
  }

  void flush_stats(bool stored) override { runtime_.flush_stats(stored); }

 private:
  // What the compile depended on, from what the watch saw; no set when it must not be stored.
  static direct::RecordedDependencies dependencies_of(const watch::CompileWatch& watch, std::int64_t start_realtime_ns,
                                                      const ProgramRecord& record) {
    direct::RecordedDependencies dependencies;
    if (watch.tainted()) {
      dependencies.why_not = watch.why_tainted();
      dependencies.reason = watch.taint_reason();
    } else if (watch.event_count() == 0) {
      // NVRTC probes the working directory in every compile; seeing nothing means its libc calls do
      // not reach the shim here (e.g. it was loaded in a scope that bypasses the interposers), so
      // its file reads cannot be tracked.
      dependencies.why_not = "NVRTC's file accesses are not observable in this process";
      dependencies.reason = direct::NotRecorded::kUnobservable;
      core::log_once(core::LogLevel::kWarn, "unobservable",
                     "NVRTC's file accesses are not observable in this process; compiles are not cached");
    } else {
      dependencies = nvrtc_dependencies(watch::observations_of(watch), record, start_realtime_ns,
                                        variables_always_recorded(record.inputs.library),
                                        environment_variable("NVRTC_APPEND_FLAGS"));
      if (dependencies.set) variables_seen().add(*dependencies.set);
    }
    return dependencies;
  }

  Runtime& runtime_ = Runtime::instance();
};

}  // namespace

nvrtcResult nvrtcCreateProgram(const interpose::RealNvrtc& real, nvrtcProgram* prog, const char* src, const char* name,
                               int num_headers, const char* const* headers, const char* const* include_names) {
  const nvrtcResult rc = real.nvrtcCreateProgram(prog, src, name, num_headers, headers, include_names);
  return record_created_program<ErrnoGuard>(
      rc, prog, Runtime::instance().enabled(), [&] { return real.identity; }, src, name, num_headers, headers,
      include_names);
}

nvrtcResult nvrtcCompileProgram(const interpose::RealNvrtc& real, nvrtcProgram prog, int num_options,
                                const char* const* options) {
  Runtime& runtime = Runtime::instance();
  note_reached_call("NVRTC", real.link_map, reinterpret_cast<const void*>(real.nvrtcVersion), real.identity);
  std::shared_ptr<ProgramRecord> record = runtime.enabled() ? program_table().find(prog) : nullptr;
  if (!record) return real.nvrtcCompileProgram(prog, num_options, options);
  ErrnoGuard errno_guard;
  LinuxCompileHost host;
  int error_after = errno;
  const nvrtcResult rc = compile_program(host, real, *record, prog, num_options, options, &error_after);
  errno_guard.set(error_after);
  return rc;
}

}  // namespace nvrtc_cache::shim::hooks
