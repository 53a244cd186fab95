// nvrtc-cache __sample-compile: compiles one tiny kernel through the NVRTC this process reaches
// (loaded by path and its functions looked up, the way cuda.core and CuPy do: platform/dynamic_library.h) and prints what it got, for `nvrtc-cache doctor`
// to run directly and through the shim and compare. Hidden from --help.
#include <nvrtc.h>

#include <functional>
#include <string>

#include <fmt/format.h>

#include "platform/dynamic_library.h"
#include "tools/commands.h"

namespace nvrtc_cache::tools {
namespace {

constexpr const char* kSource = "extern \"C\" __global__ void nvrtc_cache_doctor(float* x) { x[0] = 42.0f; }\n";

int sample_compile(const std::string& library) {
  std::string error;
  void* handle = platform::load_library(library, &error);
  if (handle == nullptr) {
    fmt::print(stderr, "cannot load {}: {}\n", library, error);
    return 3;
  }
#define NVRTC_CACHE_RESOLVE(name) \
  auto name = reinterpret_cast<decltype(&::name)>(platform::library_function(handle, #name))
  NVRTC_CACHE_RESOLVE(nvrtcCreateProgram);
  NVRTC_CACHE_RESOLVE(nvrtcCompileProgram);
  NVRTC_CACHE_RESOLVE(nvrtcGetPTXSize);
  NVRTC_CACHE_RESOLVE(nvrtcGetPTX);
  NVRTC_CACHE_RESOLVE(nvrtcDestroyProgram);
  NVRTC_CACHE_RESOLVE(nvrtcGetErrorString);
  NVRTC_CACHE_RESOLVE(nvrtcGetProgramLogSize);
  NVRTC_CACHE_RESOLVE(nvrtcGetProgramLog);
#undef NVRTC_CACHE_RESOLVE
  if (!nvrtcCreateProgram || !nvrtcCompileProgram || !nvrtcGetPTXSize || !nvrtcGetPTX || !nvrtcDestroyProgram) {
    fmt::print(stderr, "{} lacks NVRTC's functions\n", library);
    return 3;
  }
  nvrtcProgram program = nullptr;
  if (nvrtcCreateProgram(&program, kSource, "nvrtc_cache_doctor.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return 4;
  const char* options[] = {"--gpu-architecture=compute_80"};
  const nvrtcResult rc = nvrtcCompileProgram(program, 1, options);
  std::size_t size = 0;
  std::string ptx;
  if (rc == NVRTC_SUCCESS && nvrtcGetPTXSize(program, &size) == NVRTC_SUCCESS) {
    ptx.resize(size);
    nvrtcGetPTX(program, ptx.data());
  } else if (rc != NVRTC_SUCCESS) {  // why, on stderr (doctor shows its first line)
    std::string log;
    if (std::size_t log_size = 0; nvrtcGetProgramLogSize && nvrtcGetProgramLog &&
                                  nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      log.resize(log_size);
      if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) log.clear();
      log.resize(log.find_first_of(std::string("\n\0", 2)) == std::string::npos
                     ? log.size()
                     : log.find_first_of(std::string("\n\0", 2)));
    }
    fmt::print(stderr, "nvrtcCompileProgram returned {} ({}){}\n", static_cast<int>(rc),
               nvrtcGetErrorString ? nvrtcGetErrorString(rc) : "?", log.empty() ? "" : ": " + log);
  }
  nvrtcDestroyProgram(&program);
  fmt::print("compile rc {}, ptx {} bytes, digest {:016x}\n", static_cast<int>(rc), ptx.size(),
             std::hash<std::string>{}(ptx));
  return rc == NVRTC_SUCCESS ? 0 : 5;
}

}  // namespace

void add_sample_compile_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand("__sample-compile", "compile a tiny kernel (doctor's probe)");
  command->group("");  // hidden
  auto library = std::make_shared<std::string>("libnvrtc.so.13");
  command->add_option("LIBRARY", *library, "the NVRTC library to load");
  command->callback([&outcome, library] { outcome.exit_code = sample_compile(*library); });
}

}  // namespace nvrtc_cache::tools
