// The Linux shim's and proxy's JitHost (shim/lifecycle/jit_host.h): the Runtime's store, statistics
// and settings (shim/runtime.h), the libc watch (shim/watch/file_watch.h), single-flight through claim
// files and the shared tiers (shim/flight/runtime_flight.h), $PWD, records (NVRTC_CACHE_RECORD) and
// the call report (shim/call_report.h). Its one state
// of its own: the environment variables each library has read in this process (some are read once,
// where no watch sees them), under a mutex of the fork order (platform::ForkRank::kVariablesSeen).
#include <array>
#include <cerrno>
#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/log.h"
#include "platform/env.h"
#include "platform/fork_locks.h"
#include "shim/call_report.h"
#include "shim/flight/runtime_flight.h"
#include "shim/flight/single_flight.h"
#include "shim/interpose/loaded_object.h"
#include "shim/lifecycle/jit_host.h"
#include "shim/runtime.h"
#include "shim/watch/file_watch.h"
#include "shim/watch/observations.h"
#include "util/clock.h"

namespace nvrtc_cache::shim {
namespace {

// Environment variables each library has read in any call of this process (some it reads only once).
class VariablesSeen {
 public:
  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child() { platform::renew_in_child(mu_); }
  std::vector<std::string> snapshot(core::JitLibrary library) {
    std::lock_guard lock(mu_);
    const std::set<std::string>& names = names_[index(library)];
    return {names.begin(), names.end()};
  }
  void add(core::JitLibrary library, const direct::DependencySet& set) {
    std::lock_guard lock(mu_);
    for (const auto& e : set.env) names_[index(library)].insert(e.name);
  }

 private:
  static constexpr std::size_t kLibraries = std::size(core::kJitLibraries);
  static std::size_t index(core::JitLibrary library) { return static_cast<std::size_t>(library) % kLibraries; }
  std::mutex mu_;
  std::array<std::set<std::string>, kLibraries> names_;
};

VariablesSeen& variables_seen() {
  static auto* seen = new VariablesSeen();  // leaked: usable from exit handlers
  return *seen;
}

__attribute__((constructor)) void register_variables_seen_fork_lock() {
  platform::join_fork_order_of<&variables_seen>(platform::ForkRank::kVariablesSeen);
}

class LinuxHost final : public JitHost {
 public:
  bool enabled() override { return runtime_.enabled(); }
  store::Store* store() override { return runtime_.store(); }
  bool store_read_only() override { return runtime_.store_read_only(); }
  core::StatsDeltas& stats() override { return runtime_.stats(); }
  int compression_level() override { return runtime_.config().compression_level; }
  std::optional<std::string> shell_directory() override { return platform::Env::system()->environment_variable("PWD"); }

  Flight claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready) override {
    return as_flight(shim::claim_or_wait(key, result_ready));
  }

  WatchedCall run_watched(const WatchedLibrary& library, const std::function<void()>& call,
                          const DependencyRule& rule) override {
    watch::CompileWatch watch(library.code);
    WatchedCall out;
    const std::int64_t start_realtime_ns = util::realtime_ns();
    const auto start = SteadyClock::now();
    call();
    const auto end = SteadyClock::now();
    watch.stop();
    out.error_after = errno;
    out.nanos = nanos_between(start, end);
    try {
      out.dependencies = dependencies_of(library, watch, start_realtime_ns, rule);
    } catch (...) {
      out.internal_error = true;  // the result stands, uncached
    }
    errno = out.error_after;
    return out;
  }

  std::string record_file() override { return runtime_.config().record_file; }
  std::string library_path(const void* link_map, const void* code) override {
    return interpose::library_path_of(link_map, code);
  }
  void note_call(core::JitLibrary library, const void* link_map, const void* code,
                 const keying::LibraryIdentity& identity) override {
    note_reached_call(core::library_name(library), link_map, code, identity);
  }
  void flush_stats(bool stored) override { runtime_.flush_stats(stored); }

 private:
  // What the call depended on, from what the watch saw; no set when it must not be stored.
  static direct::RecordedDependencies dependencies_of(const WatchedLibrary& library, const watch::CompileWatch& watch,
                                                      std::int64_t start_realtime_ns, const DependencyRule& rule) {
    direct::RecordedDependencies dependencies;
    if (watch.tainted()) {
      dependencies.why_not = watch.why_tainted();
      dependencies.reason = watch.taint_reason();
    } else if (library.reads_files_always && watch.event_count() == 0) {
      // NVRTC probes the working directory in every compile; seeing nothing means its libc calls do
      // not reach the shim here (e.g. it was loaded in a scope that bypasses the interposers), so
      // its file reads cannot be tracked.
      const std::string name = core::library_name(library.library);
      dependencies.why_not = name + "'s file accesses are not observable in this process";
      dependencies.reason = direct::NotRecorded::kUnobservable;
      core::log_once(core::LogLevel::kWarn, "unobservable:" + name,
                     name + "'s file accesses are not observable in this process; its calls are not cached");
    } else {
      dependencies = rule(watch::observations_of(watch), start_realtime_ns, variables_seen().snapshot(library.library));
      if (dependencies.set) variables_seen().add(library.library, *dependencies.set);
    }
    return dependencies;
  }

  Runtime& runtime_ = Runtime::instance();
};

}  // namespace

JitHost& jit_host() {
  static auto* host = new LinuxHost();  // leaked: usable from exit handlers
  return *host;
}

}  // namespace nvrtc_cache::shim
