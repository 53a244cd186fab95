#include "shim/lifecycle/handle_lifecycle.h"

#include "core/program_label.h"
#include "platform/env.h"
#include "shim/record_writer.h"

namespace nvrtc_cache::shim::handle_lifecycle {

namespace {

std::vector<std::string> input_names_of(const HandleRecord& record) {
  std::vector<std::string> names;
  for (const keying::HandleInput& input : record.inputs.inputs) names.push_back(input.name.value_or(""));
  return names;
}

}  // namespace

std::string label(const HandleRecord& record, const keying::CacheKey* key, std::string_view ptx) {
  const bool nvvm = record.library == core::JitLibrary::nvvm;
  std::string text = core::handle_label(nvvm ? "nvvm" : "link", input_names_of(record), nvvm, ptx);
  if (key != nullptr) text += " (key " + keying::to_hex(*key) + ")";
  return text;
}

bool labelled_by_ptx(const HandleRecord& record) {
  return core::handle_label_needs_ptx(input_names_of(record), record.library == core::JitLibrary::nvvm);
}

std::shared_ptr<HandleRecord> record_of(JitHost& host, const void* handle) {
  return host.enabled() ? handle_table().find(handle) : nullptr;
}

std::optional<NotCacheable> reason_not_captured(core::JitLibrary library, const keying::LibraryIdentity& identity,
                                                const std::vector<std::string>& unknown_functions,
                                                const HandleRecord& record, const char* what) {
  if (!record.capturable) return NotCacheable{record.why_not, record.why_not_reason};
  if (unknown_functions.empty()) return std::nullopt;
  const std::string name = core::library_name(library);
  std::string names;
  for (const std::string& function : unknown_functions) names += (names.empty() ? "" : ", ") + function;
  core::log_once(core::LogLevel::kWarn, "unknown-functions:" + name + ":" + identity.build_id,
                 name + " " + std::to_string(identity.major) + "." + std::to_string(identity.minor) +
                     " exports functions this build does not know (" + names + "); its " + what +
                     "s are passed through uncached");
  return NotCacheable{name + " exports functions this build does not know",
                      core::Counter::uncacheable_unknown_function};
}

void count_uncacheable(core::StatsDeltas& stats, core::JitLibrary library, const NotCacheable& why,
                       const std::string& label) {
  stats.add(core::counters_of(library).uncacheable);
  stats.add(core::reason_of(library, why.reason));
  log_info([&] { return "not cached: " + label + ": " + why.why; });
}

std::optional<std::string> read_regular_file(const char* path) {
  std::string content;
  if (platform::Env::system()->read_file(path, kMaxCapturedBytes, &content) != 0) return std::nullopt;
  return content;
}

void record_call(JitHost& host, core::JitLibrary library, const void* link_map, const void* code,
                 const HandleRecord& record) {
  const platform::ErrorStateKept kept;
  try {
    const std::string file = host.record_file();
    if (file.empty()) return;
    append_handle_record(file, library, host.library_path(link_map, code), record.inputs,
                         platform::Env::system()->current_directory().value_or(""));
  } catch (...) {
    core::log_once(core::LogLevel::kWarn, "record-exception",
                   "internal error while recording a link or NVVM compile; not recorded");
  }
}

void record_created(const void* handle, core::JitLibrary library, const keying::LibraryIdentity& identity,
                    const std::vector<std::string>& options, bool capturable, const std::string& why_not,
                    core::Counter why_not_reason) {
  const platform::ErrorStateKept kept;
  try {
    auto record = std::make_shared<HandleRecord>();
    record->library = library;
    record->inputs.library = identity;
    record->inputs.options = options;
    if (!capturable) not_capturable(*record, why_not, why_not_reason);
    handle_table().insert(handle, std::move(record));
  } catch (...) {
    handle_table().erase(handle);  // an unrecorded handle simply passes through
  }
}

void record_input(HandleRecord& record, int rc, std::int32_t type, const void* data, std::size_t size, const char* name,
                  bool from_file) {
  const platform::ErrorStateKept kept;
  try {
    if (rc != 0) {
      not_capturable(record, "adding an input returned " + std::to_string(rc));
    } else if (data == nullptr && size > 0) {
      not_capturable(record, "an input's data was NULL");
    } else if (record.capturable) {
      keying::HandleInput& input = record.inputs.inputs.emplace_back();
      input.type = type;
      input.from_file = from_file;
      if (name) input.name = name;
      if (size > 0) input.bytes.assign(static_cast<const char*>(data), size);
    }
  } catch (...) {
    not_capturable(record, "an input could not be recorded");
  }
}

}  // namespace nvrtc_cache::shim::handle_lifecycle
