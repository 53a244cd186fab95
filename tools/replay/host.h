// What `nvrtc-cache replay` does differently per system (tools/replay/replay.h): how the command judges a
// recorded library before any worker starts, how a worker process is started with the cache in it,
// how a worker reaches NVRTC through the cache, and how it enters a program's directory.
// - Linux (tools/replay/host_posix.cc): the workers are this executable with the shim preloaded
//   (LD_PRELOAD); a library is judged on disk and then loaded by the command as well
//   (tools/doctor/nvrtc_library_check.h); dlsym answers through the shim; $PWD is set as recorded. Links and
//   NVVM compiles are replayed (tools/replay/handle_worker.cc).
// - Windows (tools/replay/host_windows.cc): the workers are nvrtc-cache.exe, each loading the
//   proxy DLL installed beside it with NVRTC_CACHE_REAL_NVRTC naming the recorded DLL, judged on disk
//   first (tools/doctor/nvrtc_dll_check.h) and its loaded image checked after; one real DLL per
//   process (the proxy's), so one per replay; the proxy serves NVRTC only, so links and NVVM
//   compiles are refused.
// Contract: single-threaded (a worker; the command's judging); never throws except std::bad_alloc;
// every refusal is one sentence naming the library and saying why.
#pragma once

#include <string>
#include <vector>

#include <nvrtc.h>

#include "core/compile_record.h"
#include "core/handle_record.h"
#include "keying/program_inputs.h"
#include "platform/process.h"

namespace nvrtc_cache::tools {

// Whether one replay compiles with one NVRTC library only (Windows: the proxy binds one real DLL per
// process); the command then refuses programs recorded with another (--nvrtc names the one to use).
extern const bool kReplayUsesOneNvrtc;

// The sentences of replay's help that differ per system: what becomes of links and NVVM compiles,
// which library is loaded, and what --nvrtc names.
struct ReplayHelp {
  const char* links;
  const char* trust;
  const char* nvrtc_option;
};
extern const ReplayHelp kReplayHelp;

// The recorded NVRTC as the command judged it: the path the workers load (every link resolved), or
// why it must not be loaded.
struct JudgedLibrary {
  std::string resolved;
  std::string refused;
};
JudgedLibrary judge_recorded_nvrtc(const std::string& path, const keying::LibraryIdentity& recorded);

// Why a recorded link or NVVM compile's library must not be loaded (""), pointing `call` at the file
// judged when it may.
std::string judge_recorded_handle_library(core::HandleCallRecord& call);

// A worker process: this executable, with these changes to the environment (the cache loaded, its
// debug log in `log_file`, no recording of its own).
std::string replay_worker_program();
std::vector<platform::EnvironmentChange> replay_worker_environment(const std::string& log_file);

// NVRTC's functions as a worker calls them, through the cache; `problem` when the library could not
// be loaded (why) or lacks one of the first four.
struct ReplayNvrtc {
  decltype(&::nvrtcCreateProgram) create = nullptr;
  decltype(&::nvrtcAddNameExpression) add_name_expression = nullptr;
  decltype(&::nvrtcCompileProgram) compile = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy = nullptr;
  // The outputs a link may take (kept for retargeting): PTX, CUBIN, LTO-IR.
  decltype(&::nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) ptx = nullptr;
  decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) cubin = nullptr;
  decltype(&::nvrtcGetLTOIRSize) ltoir_size = nullptr;
  decltype(&::nvrtcGetLTOIR) ltoir = nullptr;
  std::string problem;
};
// The library at `path` (judged again in the worker before it is loaded), loaded once per path and
// identity for the life of the process.
const ReplayNvrtc& replay_nvrtc(const std::string& path, const keying::LibraryIdentity& recorded);

// Makes `directory` the working directory for compiling `record` (Linux: and $PWD as recorded);
// "" or why it could not.
std::string enter_program_directory(const std::string& directory, const core::CompileRecord& record);

}  // namespace nvrtc_cache::tools
