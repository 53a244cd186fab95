// The program lifecycle hooks: create, add name expression, flow callback, compile, destroy.
// Data flows one way: capture the inputs here -> keying -> store -> replay (shim/replay.cc).
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "keying/cache_key.h"
#include "shim/capture.h"
#include "shim/file_watch.h"
#include "shim/hooks.h"
#include "shim/log.h"
#include "shim/program_table.h"
#include "shim/runtime.h"

namespace nvrtc_cache::shim::hooks {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nanos_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// Restores errno on scope exit to the value it had when `set()` was last called (or at entry).
class ErrnoGuard {
 public:
  ErrnoGuard() : saved_(errno) {}
  ~ErrnoGuard() { errno = saved_; }
  void set(int value) { saved_ = value; }

 private:
  int saved_;
};

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

// Why the watched compile must not be stored, or "" if it may. Failed probes are not reads.
std::string reason_watch_forbids_storing(const CompileWatch& watch) {
  if (watch.tainted()) return "too many file events to record";
  for (std::size_t i = 0; i < watch.event_count(); ++i) {
    const WatchEvent e = watch.event(i);
    if (!e.succeeded || is_driver_object(e.caller)) continue;
    switch (e.kind) {
      case WatchEventKind::kOpen:
      case WatchEventKind::kOpendir:
        return "NVRTC read " + std::string(e.subject) + " (on-disk dependencies are not tracked yet)";
      case WatchEventKind::kGetenv:
        if (environment_variable_affects_output(e.subject)) {
          return "environment variable " + std::string(e.subject) + " is set";
        }
        break;
      default:
        break;
    }
  }
  return {};
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

nvrtcResult compile_uncached(const RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog, int n,
                             const char* const* options, std::string_view why) {
  Runtime& runtime = Runtime::instance();
  runtime.stats().add(Counter::uncacheable);
  if (log_enabled(LogLevel::kDebug)) log_line(LogLevel::kDebug, "uncacheable compile: " + std::string(why));
  record.served.reset();
  const nvrtcResult rc = real.nvrtcCompileProgram(prog, n, options);
  const int compile_errno = errno;
  (void)runtime.store();  // statistics are kept in the store, shared by every process
  runtime.flush_stats(false);
  errno = compile_errno;
  return rc;
}

// Serves the compile from the store if it holds the key; returns false on a miss.
bool try_serve(store::Store& store, ProgramRecord& record, const keying::CacheKey& key,
               Clock::time_point started, Clock::time_point keyed, nvrtcResult& rc) {
  Runtime& runtime = Runtime::instance();
  std::optional<std::string> bytes = store.get(keying::as_bytes(key));
  const auto looked_up = Clock::now();
  if (!bytes) return false;
  std::optional<CompileEntry> entry = decode_entry(*bytes);
  if (!entry) {
    runtime.stats().add(Counter::corrupt);
    log_once(LogLevel::kWarn, "corrupt-entry", "a cache entry failed verification; dropped and recompiled");
    (void)store.erase(keying::as_bytes(key));
    return false;
  }
  rc = static_cast<nvrtcResult>(entry->compile_rc);
  const std::int64_t saved = static_cast<std::int64_t>(entry->compile_nanos);
  record.served = std::make_shared<const CompileEntry>(std::move(*entry));
  const auto replayed = Clock::now();
  auto& stats = runtime.stats();
  stats.add(Counter::hits);
  stats.add(Counter::hit_keying_ns, nanos_between(started, keyed));
  stats.add(Counter::hit_lookup_ns, nanos_between(keyed, looked_up));
  stats.add(Counter::hit_replay_ns, nanos_between(looked_up, replayed));
  stats.add(Counter::saved_ns, std::max<std::int64_t>(0, saved - nanos_between(started, replayed)));
  if (log_enabled(LogLevel::kDebug)) log_line(LogLevel::kDebug, "hit " + keying::to_hex(key));
  runtime.flush_stats(false);
  return true;
}

void store_result(store::Store& store, const RealNvrtc& real, nvrtcProgram prog, const ProgramRecord& record,
                  const keying::CacheKey& key, nvrtcResult compile_rc, std::int64_t compile_nanos) {
  Runtime& runtime = Runtime::instance();
  std::optional<CompileEntry> entry = capture_outputs(real, prog, record.inputs);
  if (!entry) {
    runtime.stats().add(Counter::uncacheable);
    log_line(LogLevel::kDebug, "uncacheable compile: an output could not be read back exactly");
    return;
  }
  entry->compile_rc = compile_rc;
  entry->compile_nanos = static_cast<std::uint64_t>(compile_nanos);
  runtime.stats().add(Counter::misses);
  runtime.stats().add(Counter::compile_ns, compile_nanos);
  const store::Status status = store.put(keying::as_bytes(key), encode_entry(*entry));
  if (status) {
    runtime.stats().add(Counter::stores);
    if (log_enabled(LogLevel::kDebug)) log_line(LogLevel::kDebug, "miss, stored " + keying::to_hex(key));
  } else {
    runtime.stats().add(Counter::errors);
    log_once(LogLevel::kWarn, "store-put", "could not write to the cache (" + status.message() + "); compiling without storing");
  }
  runtime.flush_stats(true);
}

nvrtcResult compile_through_cache(const RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog, int n,
                                  const char* const* options) {
  const auto started = Clock::now();
  record.inputs.options.assign(options, options + n);
  record.inputs.working_directory = current_working_directory();
  if (const char* pwd = std::getenv("PWD")) record.inputs.pwd_variable = pwd;
  else record.inputs.pwd_variable.reset();
  const keying::CacheKey key = keying::compute_key(record.inputs);
  store::Store* store = Runtime::instance().store();
  const auto keyed = Clock::now();
  nvrtcResult rc = NVRTC_SUCCESS;
  if (store && try_serve(*store, record, key, started, keyed, rc)) return rc;

  record.served.reset();
  CompileWatch watch;
  const auto compile_start = Clock::now();
  rc = real.nvrtcCompileProgram(prog, n, options);
  const auto compile_end = Clock::now();
  watch.stop();
  const int compile_errno = errno;

  std::string why_not;
  if (!result_is_cacheable(rc)) why_not = "NVRTC returned " + std::to_string(rc);
  if (why_not.empty()) why_not = reason_watch_forbids_storing(watch);
  if (!why_not.empty()) {
    Runtime::instance().stats().add(Counter::uncacheable);
    if (log_enabled(LogLevel::kDebug)) log_line(LogLevel::kDebug, "uncacheable compile: " + why_not);
    Runtime::instance().flush_stats(false);
  } else if (store) {
    try {
      store_result(*store, real, prog, record, key, rc, nanos_between(compile_start, compile_end));
    } catch (...) {  // the real compile stands; only the caching failed
      Runtime::instance().stats().add(Counter::errors);
      log_once(LogLevel::kError, "store-exception", "internal error while storing a result; not cached");
    }
  } else {
    Runtime::instance().stats().add(Counter::errors);
  }
  errno = compile_errno;
  return rc;
}

}  // namespace

nvrtcResult nvrtcCreateProgram(const RealNvrtc& real, nvrtcProgram* prog, const char* src, const char* name,
                               int num_headers, const char* const* headers, const char* const* include_names) {
  const nvrtcResult rc = real.nvrtcCreateProgram(prog, src, name, num_headers, headers, include_names);
  if (rc != NVRTC_SUCCESS || prog == nullptr || *prog == nullptr || !Runtime::instance().enabled()) return rc;
  ErrnoGuard errno_guard;
  try {
    auto record = std::make_shared<ProgramRecord>();
    record->real = &real;
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

nvrtcResult nvrtcDestroyProgram(const RealNvrtc& real, nvrtcProgram* prog) {
  if (prog != nullptr && *prog != nullptr) {
    // Before the real destroy: afterwards NVRTC may hand the same address to another thread's program.
    ErrnoGuard errno_guard;
    program_table().erase(*prog);
  }
  return real.nvrtcDestroyProgram(prog);
}

nvrtcResult nvrtcAddNameExpression(const RealNvrtc& real, nvrtcProgram prog, const char* const name_expression) {
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

nvrtcResult nvrtcSetFlowCallback(const RealNvrtc& real, nvrtcProgram prog, int (*callback)(void*, void*),
                                 void* payload) {
  const nvrtcResult rc = real.nvrtcSetFlowCallback(prog, callback, payload);
  if (rc == NVRTC_SUCCESS) {
    if (auto record = program_table().find(prog)) record->has_flow_callback = record->has_flow_callback || callback;
  }
  return rc;
}

nvrtcResult nvrtcCompileProgram(const RealNvrtc& real, nvrtcProgram prog, int num_options,
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
    runtime.stats().add(Counter::errors);
    log_once(LogLevel::kError, "compile-exception", "internal error; compiling without the cache");
    record->served.reset();
    const nvrtcResult rc = real.nvrtcCompileProgram(prog, num_options, options);
    errno_guard.set(errno);
    return rc;
  }
}

}  // namespace nvrtc_cache::shim::hooks
