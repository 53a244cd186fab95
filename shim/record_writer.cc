#include "shim/record_writer.h"

#include <string>

#include "core/compile_record.h"
#include "core/log.h"
#include "platform/errno_guard.h"
#include "platform/own_file.h"

namespace nvrtc_cache::shim {
namespace {

void log_append_failure(const std::string& file, const std::string& why) {
  if (why.empty()) return;
  core::log_once(core::LogLevel::kWarn, "record-write",
                 "cannot append to the record file " + file + " (" + why + "); compiles are not recorded");
}

}  // namespace

void append_compile_record(const std::string& file, std::string_view library_path, const ProgramRecord& record,
                           const direct::DependencySet& dependencies) noexcept {
  platform::ErrnoGuard errno_guard;
  try {
    log_append_failure(
        file, platform::append_whole_locked(file, core::encode_record(library_path, record.inputs, dependencies)));
  } catch (...) {
    core::log_once(core::LogLevel::kWarn, "record-exception", "internal error while recording a compile; not recorded");
  }
}

void append_handle_record(const std::string& file, core::JitLibrary library, std::string_view library_path,
                          const keying::HandleInputs& inputs, const std::string& working_directory) noexcept {
  platform::ErrnoGuard errno_guard;
  try {
    core::HandleCallRecord record;
    record.library = library;
    record.library_path = std::string(library_path);
    record.working_directory = working_directory;
    record.inputs = inputs;
    log_append_failure(file, platform::append_whole_locked(file, core::encode_handle_record(record)));
  } catch (...) {
    core::log_once(core::LogLevel::kWarn, "record-exception",
                   "internal error while recording a link or NVVM compile; not recorded");
  }
}

}  // namespace nvrtc_cache::shim
