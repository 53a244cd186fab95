#include "libraries/nvrtc/compile_steps.h"

#include <algorithm>
#include <utility>

#include "core/entry_compression.h"
#include "core/log.h"
#include "libraries/nvrtc/options.h"
#include "keying/program_name_rule.h"
#include "libraries/nvrtc/capture.h"
#include "libraries/nvrtc/bundled_headers.h"
#include "libraries/nvrtc/hooks.h"
#include "store/lmdb/watched_mappings.h"
#include "platform/error_state.h"
#include "shim/lifecycle/working_directory_markers.h"

namespace nvrtc_cache::shim {

std::optional<NotCacheable> reason_not_cacheable(const interpose::RealNvrtc& real, const ProgramRecord& record,
                                                 int num_options, const char* const* options,
                                                 const std::optional<std::string_view>& append_flags) {
  using core::Counter;
  if (record.inputs.library.major < 12) {
    return NotCacheable{"NVRTC " + std::to_string(record.inputs.library.major) + "." +
                            std::to_string(record.inputs.library.minor) + " is older than 12.0, the oldest cached",
                        Counter::uncacheable_unsupported_version};
  }
  if (!record.capturable) return NotCacheable{"its inputs could not be captured", Counter::uncacheable_inputs};
  if (record.has_flow_callback) return NotCacheable{"it has a flow callback", Counter::uncacheable_flow_callback};
  if (num_options < 0 || (num_options > 0 && options == nullptr)) {
    return NotCacheable{"invalid option list", Counter::uncacheable_inputs};
  }
  for (int i = 0; i < num_options; ++i) {
    if (options[i] == nullptr) return NotCacheable{"a NULL option", Counter::uncacheable_inputs};
  }
  if (!real.unknown_functions.empty()) {
    return NotCacheable{"this NVRTC exports functions this build does not know (" + real.unknown_functions.front() +
                            (real.unknown_functions.size() > 1 ? ", ..." : "") + ")",
                        Counter::uncacheable_unknown_function};
  }
  const std::vector<std::string_view> given(options, options + num_options);
  const keying::OptionScan scan = keying::scan_compile_options(
      given, append_flags, keying::NvrtcVersion{record.inputs.library.major, record.inputs.library.minor});
  if (scan.side_effect) {
    return NotCacheable{"option " + *scan.side_effect + " has side effects", Counter::uncacheable_side_effect_option};
  }
  if (scan.unknown) {
    return NotCacheable{"option " + *scan.unknown + " is unknown for NVRTC " +
                            std::to_string(record.inputs.library.major) + "." +
                            std::to_string(record.inputs.library.minor),
                        Counter::uncacheable_unknown_option};
  }
  return std::nullopt;
}

void materialize_served(const interpose::RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog) {
  if (!record.served) return;
  record.served.reset();
  std::vector<const char*> options;
  options.reserve(record.inputs.options.size());
  for (const std::string& option : record.inputs.options) options.push_back(option.c_str());
  (void)real.nvrtcCompileProgram(prog, static_cast<int>(options.size()), options.data());
}

core::Counter uncacheable_counter(direct::NotRecorded reason) {
  switch (reason) {
    case direct::NotRecorded::kTimeMacro:
      return core::Counter::uncacheable_time;
    case direct::NotRecorded::kFileModified:
      return core::Counter::uncacheable_file_modified;
    case direct::NotRecorded::kWroteOrListed:
      return core::Counter::uncacheable_wrote_file;
    case direct::NotRecorded::kUnwatchable:
      return core::Counter::uncacheable_unwatchable;
    case direct::NotRecorded::kUnobservable:
      return core::Counter::uncacheable_unobservable;
    case direct::NotRecorded::kNvrtcError:
      return core::Counter::uncacheable_library_error;
    case direct::NotRecorded::kOther:
      break;
  }
  return core::Counter::uncacheable_other;
}

bool result_is_cacheable(nvrtcResult rc) {
  return rc == NVRTC_SUCCESS || rc == NVRTC_ERROR_COMPILATION || rc == NVRTC_ERROR_INVALID_OPTION;
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

direct::ProgramNameScan program_name_scan_of(const keying::ProgramInputs& inputs) {
  direct::ProgramNameScan scan;
  scan.add_source(inputs.source);
  for (const auto& header : inputs.headers) scan.add_header(header.content);
  const std::vector<std::string>& options = inputs.options;
  for (std::size_t i = 0; i < options.size(); ++i) {
    std::string_view body = options[i];
    body.remove_prefix(body.starts_with("--") ? 2 : body.starts_with("-") ? 1 : 0);
    for (std::string_view spelling : {std::string_view("define-macro"), std::string_view("D")}) {
      if (!body.starts_with(spelling)) continue;
      std::string_view value = body.substr(spelling.size());
      if (value.starts_with('=') && spelling.size() > 1) value.remove_prefix(1);
      if (value.empty() && i + 1 < options.size()) value = options[i + 1];
      if (spelling.size() > 1 || !value.empty()) scan.add_command_line_macro(value);
      break;
    }
  }
  return scan;
}

namespace {

// NVRTC looks at the program's own path and its directory (whether they exist) but, without line
// info, its outputs are the same whatever it finds there (measured with NVRTC 13.0: the directory
// absent, empty, or holding the file with other content); a read of the file is not such a probe.
bool is_probe_of_the_program_path(const keying::ProgramInputs& inputs, const direct::PathDependency& path) {
  if (path.content || !inputs.name) return false;
  const std::string_view directory = keying::program_directory(*inputs.name);
  return path.path == *inputs.name || path.path == directory || path.path == directory.substr(0, directory.size() - 1);
}

}  // namespace

bool result_depends_on_program_directory(const keying::ProgramInputs& inputs, const direct::DependencySet& dependencies,
                                         const core::CompileEntry& entry, bool texts_reveal_it) {
  if (texts_reveal_it || !inputs.name) return true;
  const std::string_view directory = keying::program_directory(*inputs.name);
  if (directory.size() <= 1) return true;  // "/kern.cu": any path is "in" it
  for (const auto& path : dependencies.paths) {
    if (is_probe_of_the_program_path(inputs, path)) continue;
    if (path.path.starts_with(directory) || path.realpath_target.value_or("").starts_with(directory) ||
        path.readlink_target.value_or("").starts_with(directory)) {
      return true;
    }
  }
  const std::string_view bare = directory.substr(0, directory.size() - 1);  // as a diagnostic might show it
  for (core::OutputKind kind : core::kOutputKinds) {
    if (entry.output(kind).bytes.find(bare) != std::string::npos) return true;
  }
  for (const auto& name : entry.lowered_names) {
    if (name.lowered.find(bare) != std::string::npos) return true;
  }
  return false;
}

Lookup look_up(store::Store& store, const keying::CacheKey& direct_key, const interpose::RealNvrtc& real,
               core::StatsDeltas& stats, void (*on_corrupt_entry)()) {
  return look_up_manifest<core::CompileEntry>(
      store, direct_key, stats, [](const keying::CacheKey& key) { return direct::result_store_key(key); },
      [](std::string_view bytes) { return core::decode_entry(bytes); },
      [&real](const core::CompileEntry& entry) -> std::optional<Unusable> {
        if (covers_outputs_of(entry, real)) return std::nullopt;
        return Unusable{"the result lacks an output this NVRTC has", core::Counter::miss_outputs};
      },
      on_corrupt_entry);
}

std::optional<core::CompileEntry> entry_to_store(const interpose::RealNvrtc& real, nvrtcProgram prog,
                                                 const ProgramRecord& record, nvrtcResult compile_rc,
                                                 std::int64_t compile_nanos, core::StatsDeltas& stats) {
  std::optional<core::CompileEntry> entry = capture_outputs(real, prog, record.inputs);
  if (entry) entry->compile_rc = compile_rc;
  if (!entry || !core::is_well_formed(*entry)) {
    stats.add(core::Counter::uncacheable);
    stats.add(core::Counter::uncacheable_output);
    return std::nullopt;
  }
  entry->compile_nanos = static_cast<std::uint64_t>(compile_nanos);
  core::EntryDescription& description = entry->description.emplace();
  description.program_name = record.inputs.name.value_or("");
  description.options = record.inputs.options;
  for (const auto& header : record.inputs.headers) description.header_names.push_back(header.include_name);
  description.source_bytes = record.inputs.source.size();
  description.library =
      core::LibraryVersion{record.inputs.library.major, record.inputs.library.minor, record.inputs.library.build_id};
  return entry;
}

store::Status add_to_manifest(store::Store& store, const keying::CacheKey& direct_key, const keying::CacheKey& result,
                              direct::DependencySet dependencies, std::size_t* results,
                              std::string (*store_key_of)(const keying::CacheKey&)) {
  const std::string manifest_key = direct::manifest_store_key(direct_key);
  direct::Manifest manifest;
  if (std::optional<std::string> bytes = store.get(manifest_key)) {
    manifest = direct::decode_manifest(*bytes).value_or(direct::Manifest{});
  }
  for (const keying::CacheKey& dropped : manifest.add({result, std::move(dependencies)})) {
    (void)store.erase(store_key_of(dropped));
  }
  if (results) *results = manifest.results.size();
  return store.put(manifest_key, direct::encode_manifest(manifest));
}

void note_store_damage(const store::Store& store, core::StatsDeltas& stats, std::atomic<std::uint64_t>& reported) {
  const std::uint64_t dropped = store.corrupt_entries_dropped();
  const std::uint64_t counted = reported.exchange(dropped);
  if (dropped > counted) {
    stats.add(core::Counter::corrupt, static_cast<std::int64_t>(dropped - counted));
    core::log_once(core::LogLevel::kWarn, "corrupt-envelope",
                   "a cache entry failed its checksum; dropped and recompiled");
  }
  if (store.stores_quarantined() > 0) {
    core::log_once(core::LogLevel::kWarn, "store-quarantined",
                   "the cache store was damaged; it was moved aside (store.corrupt-*) and a fresh one started");
  }
  if (store.directories_recreated() > 0) {
    core::log_once(core::LogLevel::kWarn, "cache-directory-recreated",
                   "the cache directory was removed under this process; it was created again and the store "
                   "reopened there (the entries before the removal are gone)");
  }
  if (store::lmdb::lmdb_mappings_lost() > 0) {
    core::log_once(core::LogLevel::kWarn, "store-mapping-lost",
                   "the cache store's files (lock.mdb or data.mdb) were truncated under this process: it no longer "
                   "uses what it had open, reopens the store, and passes compiles to NVRTC while it cannot");
  }
}

std::optional<store::Status> store_result(store::Store& store, const interpose::RealNvrtc& real, nvrtcProgram prog,
                                          const ProgramRecord& record, const keying::CacheKey& direct_key,
                                          direct::DependencySet dependencies, nvrtcResult compile_rc,
                                          std::int64_t compile_nanos, core::Counter miss_reason, int compression_level,
                                          core::StatsDeltas& stats, std::size_t* results_in_manifest,
                                          const keying::CacheKey* named_key, bool texts_reveal_name,
                                          keying::CacheKey* stored_under) {
  std::optional<core::CompileEntry> entry = entry_to_store(real, prog, record, compile_rc, compile_nanos, stats);
  if (!entry) return std::nullopt;
  stats.add(core::Counter::misses);
  stats.add(miss_reason);
  stats.add(core::Counter::compile_ns, compile_nanos);
  const bool named = named_key != nullptr &&
                     result_depends_on_program_directory(record.inputs, dependencies, *entry, texts_reveal_name);
  if (named_key != nullptr && !named) {  // what NVRTC found at the program's path is not a dependency
    std::erase_if(dependencies.paths, [&](const auto& p) { return is_probe_of_the_program_path(record.inputs, p); });
  }
  const keying::CacheKey& manifest_key = named ? *named_key : direct_key;
  if (stored_under) *stored_under = manifest_key;
  const keying::CacheKey result = direct::result_key(manifest_key, dependencies);
  store::Status status =
      store.put(direct::result_store_key(result), core::compress_entry(core::encode_entry(*entry), compression_level));
  if (status) status = add_to_manifest(store, manifest_key, result, std::move(dependencies), results_in_manifest);
  stats.add(status ? core::Counter::stores : core::Counter::errors);
  // An output that embeds the working directory: where it was stored from, and each output a link may
  // take, from the outputs just stored (shim/lifecycle/working_directory_markers.h).
  if (status) mark_compile_directory(store, record.inputs, entry->ltoir.bytes, entry->cubin.bytes, entry->ptx.bytes);
  return status;
}

namespace hooks {
namespace {

// Keeps the caller's error state (errno; on Windows the thread's last-error value) across the
// recording.
using ErrorStateGuard = platform::ErrorStateKept;

}  // namespace

nvrtcResult nvrtcDestroyProgram(const interpose::RealNvrtc& real, nvrtcProgram* prog) {
  if (prog != nullptr && *prog != nullptr) {
    // Before the real destroy: afterwards NVRTC may hand the same address to another thread's program.
    ErrorStateGuard guard;
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
    ErrorStateGuard guard;
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

}  // namespace hooks
direct::RecordedDependencies nvrtc_dependencies(std::vector<direct::Observation> observations,
                                                const ProgramRecord& record, std::int64_t start_realtime_ns,
                                                const std::vector<std::string>& always_recorded,
                                                const std::optional<std::string>& append_flags) {
  std::vector<const char*> options;
  for (const std::string& option : record.inputs.options) options.push_back(option.c_str());
  const std::vector<std::string> bundled =
      bundled_header_directories(static_cast<int>(options.size()), options.data(), append_flags, record.inputs.library);
  if (!bundled.empty()) {  // the install check's lock and marker (bundled_headers.h)
    std::erase_if(observations, [&](const direct::Observation& o) {
      return o.kind != direct::ObservationKind::kGetenv && is_bundled_headers_bookkeeping(o.subject, bundled);
    });
  }
  std::optional<direct::ProgramNameScan> name_scan;
  if (!record.inputs.program_directory_in_key) name_scan.emplace(program_name_scan_of(record.inputs));
  direct::RecordedDependencies dependencies = direct::record_dependencies(
      observations, record.inputs.working_directory, start_realtime_ns, time_macros_in(record.inputs), always_recorded,
      record.inputs.working_directory_use, *platform::Env::system(), name_scan ? &*name_scan : nullptr);
  if (name_scan) dependencies.reveals_program_name = name_scan->reveals_program_name();
  return dependencies;
}

}  // namespace nvrtc_cache::shim
