#include "shim/lifecycle/compile_lifecycle.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/log.h"
#include "core/program_label.h"
#include "direct/manifest.h"
#include "keying/cache_key.h"
#include "libraries/nvrtc/bundled_headers.h"
#include "keying/program_name_rule.h"
#include "libraries/nvrtc/capture.h"
#include "platform/env.h"
#include "platform/error_state.h"
#include "shim/record_writer.h"
#include "shim/lifecycle/through_cache.h"
#include "shim/lifecycle/working_directory_markers.h"

namespace nvrtc_cache::shim {
namespace {

// How a log line names a program: as `ls` and `stats` do (core/program_label.h; `ptx` is its PTX
// where known), with the name it was given where that differs, and the key `nvrtc-cache inspect`
// takes (the program's: the direct key its manifest is stored under; any prefix of 4 digits or more
// names it there).
std::string program_label(const ProgramRecord& record, const keying::CacheKey* key, std::string_view ptx = {}) {
  const std::string given = record.inputs.name.value_or("");
  const std::string label =
      core::nvrtc_program_label(given, record.inputs.name_expressions, ptx, record.inputs.options);
  std::string text = "program '" + label + "'";
  std::string details;
  if (!given.empty() && given != label) details = "name '" + given + "'";
  if (key != nullptr) details += (details.empty() ? "key " : "; key ") + keying::to_hex(*key);
  if (!details.empty()) text += " (" + details + ")";
  return text;
}

// Whether a program's label comes from the kernels its PTX defines: only then is its PTX read for a
// log line.
bool labelled_by_ptx(const ProgramRecord& record) {
  return core::nvrtc_label_needs_ptx(record.inputs.name.value_or(""), record.inputs.name_expressions);
}

using core::log_info;

// NVRTC_APPEND_FLAGS as NVRTC's getenv reads it (the option check's).
std::optional<std::string> append_flags_variable() {
  const char* value = std::getenv("NVRTC_APPEND_FLAGS");
  return value ? std::optional<std::string>(value) : std::nullopt;
}

// The variables recorded as dependencies of every result: those NVRTC has read in any compile of this
// process (`seen`: the host's), and for NVRTC 12.9 on CUDA_CACHE_DISABLE, which turns NVRTC's own cache
// off (a hit of that cache leaves ptxas's -v lines out of the log: docs/nvrtc-versions.md). NVRTC
// reads it once per process, where no watch sees it; recorded, set or not, a result stored with
// NVRTC's cache on is never served to a process that turned it off.
std::vector<std::string> variables_always_recorded(const keying::LibraryIdentity& library,
                                                   std::vector<std::string> seen) {
  if ((library.major == 12 && library.minor >= 9) || library.major > 12) {
    if (std::find(seen.begin(), seen.end(), "CUDA_CACHE_DISABLE") == seen.end())
      seen.emplace_back("CUDA_CACHE_DISABLE");
  }
  return seen;
}

// A compile served or stored with these dependencies, into NVRTC_CACHE_RECORD's file where one is set.
void compile_recorded(JitHost& host, const interpose::RealNvrtc& real, const ProgramRecord& record,
                      const direct::DependencySet& dependencies) {
  const std::string file = host.record_file();
  if (file.empty()) return;
  append_compile_record(file, host.library_path(real.link_map, reinterpret_cast<const void*>(real.nvrtcVersion)),
                        record, dependencies);
}

// An unknown option is named once (at info: most are options NVRTC itself rejects); a newer NVRTC
// than this build knows, which stops all caching of it, is said once at the default level.
void log_not_cacheable(const interpose::RealNvrtc& real, const ProgramRecord& record, const NotCacheable& why) {
  if (why.reason == core::Counter::uncacheable_unknown_option) {
    core::log_once(core::LogLevel::kInfo, "unknown-option:" + why.why,
                   "not caching compiles with an option this build does not know: " + why.why);
  } else if (why.reason == core::Counter::uncacheable_unsupported_version) {
    core::log_once(core::LogLevel::kWarn, "unsupported-version:" + real.identity.build_id,
                   "NVRTC " + std::to_string(real.identity.major) + "." + std::to_string(real.identity.minor) +
                       " is not cached (the cache supports NVRTC 12.0 and newer); its compiles are passed "
                       "through untouched");
  } else if (why.reason == core::Counter::uncacheable_unknown_function) {
    std::string names;
    for (const std::string& name : real.unknown_functions) names += (names.empty() ? "" : ", ") + name;
    core::log_once(core::LogLevel::kWarn, "unknown-functions:" + real.identity.build_id,
                   "NVRTC " + std::to_string(real.identity.major) + "." + std::to_string(real.identity.minor) +
                       " exports functions this build does not know (" + names +
                       "); its compiles are passed through uncached");
  }
  log_info([&] { return "not cached: " + program_label(record, nullptr) + ": " + why.why; });
}

nvrtcResult compile_uncached(JitHost& host, const interpose::RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog,
                             int n, const char* const* options, const NotCacheable& why, int* error_after) {
  host.stats().add(core::Counter::uncacheable);
  host.stats().add(why.reason);
  log_not_cacheable(real, record, why);
  materialize_served(real, record, prog);
  const nvrtcResult rc = real.nvrtcCompileProgram(prog, n, options);
  *error_after = platform::error_state();
  (void)host.store();  // statistics are kept in the store, shared by every process
  return rc;
}

void log_corrupt_entry() {
  core::log_once(core::LogLevel::kWarn, "corrupt-entry", "a cache entry failed verification; dropped and recompiled");
}

// "3 files read, 12 paths probed, 2 environment variables", for the debug log.
std::string summary_of(const direct::DependencySet& dependencies) {
  const std::size_t files = static_cast<std::size_t>(
      std::count_if(dependencies.paths.begin(), dependencies.paths.end(), [](const auto& p) { return p.content; }));
  return std::to_string(files) + " files read, " + std::to_string(dependencies.paths.size() - files) +
         " paths probed, " + std::to_string(dependencies.env.size()) + " environment variables";
}

// Stores the result under its result key and adds it to the direct key's manifest.
// program_label() once NVRTC returned: with its PTX where that names the program.
std::string label_after_compile(const ProgramRecord& record, const keying::CacheKey* key,
                                const interpose::RealNvrtc& real, nvrtcProgram prog) {
  std::string ptx;
  const OutputGetters getters = output_getters(real, core::OutputKind::ptx);
  size_t size = 0;
  if (labelled_by_ptx(record) && getters.size != nullptr && getters.data != nullptr &&
      getters.size(prog, &size) == NVRTC_SUCCESS && size > 0) {
    ptx.resize(size);
    if (getters.data(prog, ptx.data()) != NVRTC_SUCCESS) ptx.clear();
  }
  return program_label(record, key, ptx);
}

void store_and_log(JitHost& host, store::Store& store, const interpose::RealNvrtc& real, nvrtcProgram prog,
                   const ProgramRecord& record, const keying::CacheKey& key, const keying::CacheKey* named_key,
                   direct::DependencySet dependencies, nvrtcResult rc, const WatchedCall& compile,
                   core::Counter miss_reason) {
  const std::string summary = summary_of(dependencies);
  std::size_t results = 0;
  keying::CacheKey stored_under = key;
  const std::optional<store::Status> status = store_result(
      store, real, prog, record, key, std::move(dependencies), rc, compile.nanos, miss_reason, host.compression_level(),
      host.stats(), &results, named_key, compile.dependencies.reveals_program_name, &stored_under);
  if (!status) {
    log_info([&] {
      return "not cached: " + label_after_compile(record, &key, real, prog) +
             ": an output could not be read back exactly";
    });
    return;
  }
  if (*status) {
    core::log_debug([&] {
      return "stored " + label_after_compile(record, &stored_under, real, prog) + ": " + summary + " (" +
             std::to_string(results) + " results in its manifest" +
             (named_key && stored_under == *named_key ? "; it depends on the program's directory" : "") + ")";
    });
  } else {
    core::log_once(core::LogLevel::kWarn, "store-put",
                   "could not write to the cache (" + status->message() + "); compiling without storing");
  }
  host.flush_stats(true);
}

// After a miss: stores the result if it can be (and the cache is writable), counting the outcome.
void keep_result(JitHost& host, store::Store* store, const interpose::RealNvrtc& real, nvrtcProgram prog,
                 const ProgramRecord& record, const keying::CacheKey& key, const keying::CacheKey* named_key,
                 nvrtcResult rc, WatchedCall& compile, core::Counter miss_reason) {
  direct::RecordedDependencies& dependencies = compile.dependencies;
  if (!result_is_cacheable(rc)) {  // an error NVRTC may not give again (out of memory, ...)
    host.stats().add(core::Counter::uncacheable);
    host.stats().add(core::Counter::uncacheable_library_error);
    log_info([&] {
      return "not cached: " + label_after_compile(record, &key, real, prog) + ": NVRTC returned " + std::to_string(rc);
    });
  } else if (!dependencies.set) {
    host.stats().add(core::Counter::uncacheable);
    host.stats().add(uncacheable_counter(dependencies.reason));
    log_info(
        [&] { return "not cached: " + label_after_compile(record, &key, real, prog) + ": " + dependencies.why_not; });
  } else if (store && host.store_read_only()) {
    host.stats().add(core::Counter::misses);  // a read-only cache stores nothing (said once at open)
    host.stats().add(miss_reason);
  } else if (store) {
    store_and_log(host, *store, real, prog, record, key, named_key, std::move(*dependencies.set), rc, compile,
                  miss_reason);
  } else {
    host.stats().add(core::Counter::errors);
  }
}

// One compile of a program through the cache (shim/lifecycle/through_cache.h's Call).
class NvrtcCompile {
 public:
  using Result = nvrtcResult;
  NvrtcCompile(const interpose::RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog, int n,
               const char* const* options)
      : real_(real), record_(record), prog_(prog), n_(n), options_(options) {}

  core::JitLibrary library() const { return core::JitLibrary::nvrtc; }
  const keying::CacheKey& key() const { return key_; }

  void prepare(JitHost& host) {
    record_compile_context(record_, n_, options_, compile_context(host));
    key_ = keying::compute_key(record_.inputs);
  }

  // Under the key, then (when it leaves the program's directory out) under the key with it.
  bool look_up(store::Store& store, core::StatsDeltas& stats, std::int64_t* validate_ns) {
    found_ = shim::look_up(store, key_, real_, stats, &log_corrupt_entry);
    if (!found_.entry) {
      if (const keying::CacheKey* named = with_program_directory()) {
        Lookup under_name = shim::look_up(store, *named, real_, stats, &log_corrupt_entry);
        if (under_name.entry) found_ = std::move(under_name);
      }
    }
    *validate_ns = found_.validate_ns;
    return found_.entry.has_value();
  }

  nvrtcResult serve(JitHost& host, const HitTimes& times) {
    const std::int64_t saved = static_cast<std::int64_t>(found_.entry->compile_nanos);
    const nvrtcResult rc = static_cast<nvrtcResult>(found_.entry->compile_rc);
    record_.served = std::make_shared<const core::CompileEntry>(std::move(*found_.entry));
    host.stats().add(core::Counter::hit_replay_ns, nanos_between(times.looked_up, SteadyClock::now()));
    count_hit(host.stats(), library(), times, saved);
    core::log_debug([&] {
      const bool by_ptx = labelled_by_ptx(record_) && record_.served;
      return "hit " + program_label(record_, &key_, by_ptx ? std::string_view(record_.served->ptx.bytes) : "");
    });
    if (found_.dependencies) compile_recorded(host, real_, record_, *found_.dependencies);
    return rc;
  }

  Miss miss(store::Store& store) {
    Miss miss{std::move(found_.miss_reason), found_.miss};
    if (miss.counter == core::Counter::miss_new) {
      if (std::optional<std::string> there = compiled_in_another_directory(store, record_.inputs)) {
        miss.counter = core::Counter::miss_working_directory;
        miss.reason = "compiled before in " + *there + ", and its options make NVRTC embed the working directory (" +
                      record_.inputs.working_directory +
                      " here) in its output; run it from one directory to share the result (docs/limits.md)";
      }
    }
    return miss;
  }

  WatchedCall run_real(JitHost& host, nvrtcResult* rc) {
    record_.served.reset();
    const std::optional<std::string> append_flags = append_flags_variable();
    return host.run_watched(
        {core::JitLibrary::nvrtc, reinterpret_cast<const void*>(real_.nvrtcCompileProgram), true},
        [&] { *rc = real_.nvrtcCompileProgram(prog_, n_, options_); },
        [&](std::vector<direct::Observation> observations, std::int64_t start_realtime_ns,
            const std::vector<std::string>& always_recorded) {
          return nvrtc_dependencies(std::move(observations), record_, start_realtime_ns,
                                    variables_always_recorded(record_.inputs.library, always_recorded), append_flags);
        });
  }

  std::string label_after_call() { return label_after_compile(record_, &key_, real_, prog_); }

  void keep(JitHost& host, store::Store* store, nvrtcResult rc, WatchedCall& compile, const Miss& miss) {
    if (compile.dependencies.set && result_is_cacheable(rc)) {
      compile_recorded(host, real_, record_, *compile.dependencies.set);
    }
    keep_result(host, store, real_, prog_, record_, key_, with_program_directory(), rc, compile, miss.counter);
  }

  void finish(JitHost&) {}

 private:
  // When the key leaves the program's directory out, results that depend on it live under the key
  // with it: computed only once the first look-up misses (a hit under the key never needs it).
  const keying::CacheKey* with_program_directory() {
    if (record_.inputs.program_directory_in_key) return nullptr;
    if (!named_key_) named_key_ = keying::compute_key_with_program_directory(record_.inputs);
    return &*named_key_;
  }

  const interpose::RealNvrtc& real_;
  ProgramRecord& record_;
  nvrtcProgram prog_;
  int n_;
  const char* const* options_;
  keying::CacheKey key_{};
  std::optional<keying::CacheKey> named_key_;
  Lookup found_;
};

}  // namespace

CompileContext compile_context(JitHost& host) {
  platform::Env* env = platform::Env::system();
  return {env->current_directory().value_or("(unknown)"), host.shell_directory(),
          env->environment_variable("NVRTC_APPEND_FLAGS")};
}

void record_compile_context(ProgramRecord& record, int n, const char* const* options, const CompileContext& context) {
  record.inputs.options.assign(options, options + n);
  record.inputs.working_directory = context.working_directory;
  record.inputs.pwd_variable = context.pwd_variable;
  record.inputs.working_directory_use = keying::working_directory_use(
      record.inputs.options, record.inputs.name,
      context.append_flags ? std::optional<std::string_view>(*context.append_flags) : std::nullopt);
  // (Macros NVRTC_APPEND_FLAGS would define are not scanned: with it set, the name stays keyed.)
  record.inputs.program_directory_in_key =
      context.append_flags ||
      !keying::program_directory_can_be_left_out(record.inputs.name, record.inputs.working_directory_use);
}

namespace {

// The compile through the cache, or uncached; what compile_program does but merging the statistics.
nvrtcResult cached_or_uncached(JitHost& host, const interpose::RealNvrtc& real, ProgramRecord& record,
                               nvrtcProgram prog, int num_options, const char* const* options,
                               int* error_after) noexcept {
  const int entry_error = platform::error_state();
  *error_after = entry_error;
  try {
    const std::optional<std::string> append_flags = append_flags_variable();
    std::optional<NotCacheable> why_not =
        reason_not_cacheable(real, record, num_options, options,
                             append_flags ? std::optional<std::string_view>(*append_flags) : std::nullopt);
    if (!why_not) why_not = host.reason_not_cacheable();
    if (!why_not) {
      // --use-bundled-headers=DIR: its install is made here, hit or miss (libraries/nvrtc/bundled_headers.h).
      const std::vector<std::string> bundled =
          bundled_header_directories(num_options, options, append_flags, record.inputs.library);
      if (!bundled.empty()) {
        if (std::optional<std::string> failed = ensure_bundled_headers(real, bundled)) {
          why_not = NotCacheable{std::move(*failed), core::Counter::uncacheable_side_effect_option};
        }
      }
    }
    if (why_not) return compile_uncached(host, real, record, prog, num_options, options, *why_not, error_after);
    NvrtcCompile compile(real, record, prog, num_options, options);
    return through_cache(host, compile, error_after);
  } catch (...) {
    // Fail open. This path is reached only before the real compile ran (allocation failures while
    // keying or looking up): through_cache catches what follows the compile.
    host.stats().add(core::Counter::errors);
    core::log_once(core::LogLevel::kError, "compile-exception", "internal error; compiling without the cache");
    record.served.reset();
    const nvrtcResult rc = real.nvrtcCompileProgram(prog, num_options, options);
    *error_after = platform::error_state();
    return rc;
  }
}

}  // namespace

nvrtcResult compile_program(JitHost& host, const interpose::RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog,
                            int num_options, const char* const* options, int* error_after) noexcept {
  const nvrtcResult rc = cached_or_uncached(host, real, record, prog, num_options, options, error_after);
  // Once per compile, whatever path it took (served, stored, refused, failed).
  try {
    host.flush_stats(false);
  } catch (...) {
  }
  return rc;
}

}  // namespace nvrtc_cache::shim
