// tools/replay/host.h on Windows: the workers are nvrtc-cache.exe loading the proxy installed beside
// it, which forwards to the recorded DLL (NVRTC_CACHE_REAL_NVRTC) after it was judged on disk
// (tools/doctor/nvrtc_dll_check.h) and is checked again once loaded: the version it reports and the
// identity of the image mapped from that very path must be the recording's.
#include <windows.h>

#include <fmt/format.h>

#include "platform/windows/wide.h"
#include "shim/windows/module_path.h"
#include "shim/windows/real_dll_candidates.h"
#include "util/pe_identity.h"
#include "tools/replay/replay.h"
#include "tools/replay/host.h"
#include "tools/doctor/nvrtc_dll_check.h"

namespace nvrtc_cache::tools {
namespace {

using platform::windows::to_utf8;
using platform::windows::to_wide;

constexpr const char* kNoLinksHere =
    "links and NVVM compiles are replayed on Linux only (the Windows proxy serves NVRTC alone)";

template <typename Fn>
void look_up(HMODULE module, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(module, name)));
}

// The proxy beside this executable, loaded with `real` as the DLL it forwards to.
std::string load_through_proxy(const std::string& real, const keying::LibraryIdentity& recorded, ReplayNvrtc& api) {
  std::wstring proxy = shim::windows::module_path(nullptr);
  proxy.resize(proxy.find_last_of(L"\\/") + 1);
  proxy += shim::windows::kRealNvrtcDllName;
  SetEnvironmentVariableW(L"NVRTC_CACHE_REAL_NVRTC", to_wide(real).c_str());
  const HMODULE module = LoadLibraryExW(proxy.c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
  if (module == nullptr) {
    return fmt::format("cannot load the cache's proxy {} (error {})", to_utf8(proxy), GetLastError());
  }
  look_up(module, "nvrtcCreateProgram", api.create);
  look_up(module, "nvrtcAddNameExpression", api.add_name_expression);
  look_up(module, "nvrtcCompileProgram", api.compile);
  look_up(module, "nvrtcDestroyProgram", api.destroy);
  look_up(module, "nvrtcGetPTXSize", api.ptx_size);
  look_up(module, "nvrtcGetPTX", api.ptx);
  look_up(module, "nvrtcGetCUBINSize", api.cubin_size);
  look_up(module, "nvrtcGetCUBIN", api.cubin);
  look_up(module, "nvrtcGetLTOIRSize", api.ltoir_size);
  look_up(module, "nvrtcGetLTOIR", api.ltoir);
  decltype(&::nvrtcVersion) version = nullptr;
  look_up(module, "nvrtcVersion", version);
  if (!api.create || !api.add_name_expression || !api.compile || !api.destroy || !version) {
    return fmt::format("the cache's proxy {} lacks NVRTC's functions", to_utf8(proxy));
  }
  int major = 0, minor = 0;
  version(&major, &minor);  // the proxy loads its real DLL here
  // The image mapped from the path judged (not the proxy, which has the same name).
  const HMODULE loaded = GetModuleHandleW(to_wide(real).c_str());
  std::string build_id, why;
  if (loaded != nullptr && loaded != module) {
    const std::optional<std::string> id =
        util::read_pe_build_id(std::string_view(reinterpret_cast<const char*>(loaded), 4096), why);
    if (id) build_id = *id;
  }
  if (loaded == nullptr || loaded == module) {
    return fmt::format("the cache's proxy did not load {} (is NVRTC_CACHE_REAL_NVRTC honoured?)", real);
  }
  if (major != recorded.major || minor != recorded.minor || build_id != recorded.build_id) {
    return fmt::format(
        "{} is NVRTC {}.{} with {} once loaded, but the recording's programs were compiled by NVRTC {}.{} with {}: "
        "refusing to replay them",
        real, major, minor, windows::describe_pe_build_id(build_id), recorded.major, recorded.minor,
        windows::describe_pe_build_id(recorded.build_id));
  }
  return {};
}

}  // namespace

const bool kReplayUsesOneNvrtc = true;

const ReplayHelp kReplayHelp = {
    .links = "The recording's libNVVM compiles and nvJitLink links are refused (replayed on Linux only: the proxy "
             "serves NVRTC alone), and one replay compiles with one NVRTC DLL. ",
    .trust = "its NVRTC DLL is loaded only if the file, and every directory above it, is owned by you, SYSTEM, "
             "Administrators or TrustedInstaller and no one else may change it (their access control lists), and "
             "its identity (PE time stamp, image size, checksum) is the recording's",
    .nvrtc_option = "the NVRTC DLL to compile with instead of the recorded path (checked the same way: owners and "
                    "access control lists, the recording's identity)"};

JudgedLibrary judge_recorded_nvrtc(const std::string& path, const keying::LibraryIdentity& recorded) {
  windows::DllCheck check = windows::check_nvrtc_dll(path, recorded);
  return {std::move(check.resolved), std::move(check.refused)};
}

std::string judge_recorded_handle_library(core::HandleCallRecord&) { return kNoLinksHere; }

std::string replay_worker_program() { return to_utf8(shim::windows::module_path(nullptr)); }

std::vector<platform::EnvironmentChange> replay_worker_environment(const std::string& log_file) {
  return {{"NVRTC_CACHE_LOG", "debug"},
          {"NVRTC_CACHE_LOG_FILE", log_file},
          {"NVRTC_CACHE_RECORD", std::nullopt},  // the replay is not part of the recording
          {"NVRTC_CACHE_DISABLE", std::nullopt}};
}

const ReplayNvrtc& replay_nvrtc(const std::string& path, const keying::LibraryIdentity& recorded) {
  static ReplayNvrtc api;
  static std::string loaded_key;
  const std::string key =
      path + '\0' + std::to_string(recorded.major) + "." + std::to_string(recorded.minor) + '\0' + recorded.build_id;
  static ReplayNvrtc other;
  if (!loaded_key.empty()) {
    if (key == loaded_key) return api;
    other.problem = fmt::format("{} is a second NVRTC DLL for this worker, whose proxy forwards to {}", path,
                                loaded_key.substr(0, loaded_key.find('\0')));
    return other;
  }
  loaded_key = key;
  windows::DllCheck check = windows::check_nvrtc_dll(path, recorded);
  api.problem = check.refused.empty() ? load_through_proxy(check.resolved, recorded, api) : check.refused;
  return api;
}

std::string enter_program_directory(const std::string& directory, const core::CompileRecord&) {
  return platform::change_directory(directory);
}

// The command sends none (judge_recorded_handle_library refuses them); a task file that holds some
// anyway has each refused.
void replay_handle_calls(const std::vector<core::HandleCallRecord>& calls, std::size_t first_index,
                         const std::vector<std::string>& archs, LogTail&, RetargetDirectory*) {
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const std::vector<ReplayVariant> variants = replay_variants(calls[i].inputs.options, archs);
    for (std::size_t v = 0; v < variants.size(); ++v) {
      std::fputs(format_outcome({first_index + i, v, "refused", kNoLinksHere}).c_str(), stdout);
    }
  }
  std::fflush(stdout);
}

}  // namespace nvrtc_cache::tools
