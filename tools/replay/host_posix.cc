#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "tools/install_paths.h"
#include "tools/doctor/nvrtc_library_check.h"
#include "tools/doctor/real_libraries.h"
#include "tools/replay/host.h"

namespace nvrtc_cache::tools {
namespace {

bool resolve_nvrtc(void* handle, ReplayNvrtc& api) {
  look_up(handle, "nvrtcCreateProgram", api.create);
  look_up(handle, "nvrtcAddNameExpression", api.add_name_expression);
  look_up(handle, "nvrtcCompileProgram", api.compile);
  look_up(handle, "nvrtcDestroyProgram", api.destroy);
  look_up(handle, "nvrtcGetPTXSize", api.ptx_size);
  look_up(handle, "nvrtcGetPTX", api.ptx);
  look_up(handle, "nvrtcGetCUBINSize", api.cubin_size);
  look_up(handle, "nvrtcGetCUBIN", api.cubin);
  look_up(handle, "nvrtcGetLTOIRSize", api.ltoir_size);
  look_up(handle, "nvrtcGetLTOIR", api.ltoir);
  return api.create && api.add_name_expression && api.compile && api.destroy;
}

// A recorded library that is gone (another venv, another machine): the same build where the run-time
// search finds it (tools/doctor/real_libraries.h), judged the same way; "" if none is.
std::string same_build_found(const std::string& path, const keying::LibraryIdentity& recorded, JitApi api) {
  if (::access(path.c_str(), F_OK) == 0) return "";
  const auto library = api == JitApi::nvrtc       ? shim::interpose::RealLibrary::kNvrtc
                       : api == JitApi::nvjitlink ? shim::interpose::RealLibrary::kNvJitLink
                                                  : shim::interpose::RealLibrary::kNvvm;
  for (const shim::interpose::FoundLibrary& candidate : real_library_candidates(library)) {
    if (check_nvrtc_file(candidate.path, recorded, api).refused.empty()) {
      fmt::print(stderr, "nvrtc-cache replay: {} is gone; using {}, the same build (found in {})\n", path,
                 candidate.path, candidate.found_via);
      return candidate.path;
    }
  }
  return "";
}

}  // namespace

const bool kReplayUsesOneNvrtc = false;

const ReplayHelp kReplayHelp = {
    .links = "The recording's libNVVM compiles and nvJitLink links are made again the same way, after the compiles: "
             "a link's input that a recorded compile produced is replaced by that compile's output for the "
             "architecture; a link with an input that cannot be retargeted is skipped for it. ",
    .trust = "its NVRTC is loaded only if the file, and every directory above it, is owned by you or root and "
             "writable by no one else, and its build-id is the recording's",
    .nvrtc_option = "the NVRTC library to compile with instead of the recorded path (checked the same way: owned by "
                    "you or root, writable by no one else, the recording's build-id)"};

JudgedLibrary judge_recorded_nvrtc(const std::string& path, const keying::LibraryIdentity& recorded) {
  const std::string found = same_build_found(path, recorded, JitApi::nvrtc);
  LoadedNvrtc loaded = load_checked_nvrtc(found.empty() ? path : found, recorded);
  return {std::move(loaded.resolved), std::move(loaded.refused)};
}

std::string judge_recorded_handle_library(core::HandleCallRecord& call) {
  const JitApi api = call.library == core::JitLibrary::nvjitlink ? JitApi::nvjitlink : JitApi::nvvm;
  if (std::string found = same_build_found(call.library_path, call.inputs.library, api); !found.empty()) {
    call.library_path = std::move(found);
  }
  NvrtcFileCheck check = check_nvrtc_file(call.library_path, call.inputs.library, api);
  if (check.refused.empty()) call.library_path = std::move(check.resolved);
  return std::move(check.refused);
}

std::string replay_worker_program() { return self_path(); }

std::vector<platform::EnvironmentChange> replay_worker_environment(const std::string& log_file) {
  const char* preloaded = std::getenv("LD_PRELOAD");
  return {{"LD_PRELOAD", shim_path(false) + (preloaded ? std::string(":") + preloaded : "")},
          {"NVRTC_CACHE_LOG", "debug"},
          {"NVRTC_CACHE_LOG_FILE", log_file},
          {"NVRTC_CACHE_RECORD", std::nullopt},  // the replay is not part of the recording
          {"NVRTC_CACHE_DISABLE", std::nullopt}};
}

// dlsym goes through the shim's hook, so every call is cached.
const ReplayNvrtc& replay_nvrtc(const std::string& path, const keying::LibraryIdentity& recorded) {
  return load_checked_api(path, recorded, JitApi::nvrtc, resolve_nvrtc);
}

std::string enter_program_directory(const std::string& directory, const core::CompileRecord& record) {
  std::string why = platform::change_directory(directory);
  if (!why.empty()) return why;
  if (record.inputs.pwd_variable)
    setenv("PWD", record.inputs.pwd_variable->c_str(), 1);
  else
    unsetenv("PWD");
  return {};
}

}  // namespace nvrtc_cache::tools
