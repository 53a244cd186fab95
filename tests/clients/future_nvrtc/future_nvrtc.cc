// A stand-in for an NVRTC newer than the cache knows ("13.9"), for tests/integration/nvrtc_versions_test.cc: a
// libnvrtc.so.13 that forwards every function of NVRTC 13.0 to the real one (opened by absolute path,
// RTLD_LOCAL, its functions taken with dlvsym so that a preloaded shim's dlsym hook does not wrap them)
// and reports version 13.9. It accepts one option 13.0 does not know, --future-output=FILE, which writes
// FILE during the compile (an effect a cache hit would not have). Built with FUTURE_NVRTC_UNKNOWN_GETTER,
// it also exports a getter the cache does not know, nvrtcGetFutureIR[Size], which answers only for a
// program this library really compiled (NVRTC_ERROR_INVALID_PROGRAM otherwise), as a new output of a
// newer NVRTC would.
// Contract: test-only; thread-safe for distinct programs; aborts if the real NVRTC cannot be loaded.
#include <dlfcn.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

struct Real {
#define NVRTC_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API_OUTSIDE_HEADER
#undef NVRTC_API
};

const Real& real() {
  static const Real loaded = [] {
    void* library = dlopen(FUTURE_NVRTC_REAL_PATH, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "future_nvrtc: cannot load %s: %s\n", FUTURE_NVRTC_REAL_PATH, dlerror());
      std::abort();
    }
    Real r;
#define NVRTC_API(kind, ret, name, params, args) \
  r.name = reinterpret_cast<ret(*) params>(dlvsym(library, #name, "libnvrtc.so.13"));
#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API_OUTSIDE_HEADER
#undef NVRTC_API
    return r;
  }();
  return loaded;
}

std::mutex mu;
std::set<nvrtcProgram> compiled;  // programs whose last compile this library ran and that succeeded

constexpr const char* kFutureOption = "--future-output=";

}  // namespace

#define NVRTC_FORWARD(kind, ret, name, params, args) \
  extern "C" __attribute__((visibility("default"))) ret name params { return real().name args; }
#define NVRTC_API(kind, ret, name, params, args) NVRTC_FORWARD_##name(kind, ret, name, params, args)
// Every function forwards, but for the four this stand-in changes (defined below).
#define NVRTC_FORWARD_nvrtcGetErrorString NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcVersion(...)
#define NVRTC_FORWARD_nvrtcGetNumSupportedArchs NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetSupportedArchs NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcCreateProgram NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcDestroyProgram(...)
#define NVRTC_FORWARD_nvrtcCompileProgram(...)
#define NVRTC_FORWARD_nvrtcGetPTXSize NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetPTX NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetCUBINSize NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetCUBIN NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetLTOIRSize NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetLTOIR NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetOptiXIRSize NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetOptiXIR NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetProgramLogSize NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetProgramLog NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcAddNameExpression NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetLoweredName NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetPCHHeapSize NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcSetPCHHeapSize NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetPCHCreateStatus NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcGetPCHHeapSizeRequired NVRTC_FORWARD
#define NVRTC_FORWARD_nvrtcSetFlowCallback NVRTC_FORWARD
#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API_OUTSIDE_HEADER
#undef NVRTC_API

extern "C" __attribute__((visibility("default"))) nvrtcResult nvrtcVersion(int* major, int* minor) {
  if (major == nullptr || minor == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  *major = 13;
  *minor = 9;
  return NVRTC_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  if (prog != nullptr) {
    std::lock_guard lock(mu);
    compiled.erase(*prog);
  }
  return real().nvrtcDestroyProgram(prog);
}

extern "C" __attribute__((visibility("default"))) nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int n,
                                                                                  const char* const* options) {
  std::vector<const char*> passed;
  std::string output_file;
  for (int i = 0; options != nullptr && i < n; ++i) {
    if (options[i] != nullptr && std::strncmp(options[i], kFutureOption, std::strlen(kFutureOption)) == 0) {
      output_file = options[i] + std::strlen(kFutureOption);
    } else {
      passed.push_back(options[i]);
    }
  }
  const nvrtcResult rc = real().nvrtcCompileProgram(prog, options ? static_cast<int>(passed.size()) : n,
                                                    options ? passed.data() : nullptr);
  if (!output_file.empty()) {
    if (FILE* f = std::fopen(output_file.c_str(), "w")) {
      std::fputs("future output\n", f);
      std::fclose(f);
    }
  }
  std::lock_guard lock(mu);
  if (rc == NVRTC_SUCCESS) {
    compiled.insert(prog);
  } else {
    compiled.erase(prog);
  }
  return rc;
}

#ifdef FUTURE_NVRTC_UNKNOWN_GETTER
namespace {
constexpr char kFutureIR[] = "future IR of a compiled program";
bool was_compiled(nvrtcProgram prog) {
  std::lock_guard lock(mu);
  return compiled.count(prog) != 0;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) nvrtcResult nvrtcGetFutureIRSize(nvrtcProgram prog, size_t* size) {
  if (size == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  if (!was_compiled(prog)) return NVRTC_ERROR_INVALID_PROGRAM;
  *size = sizeof kFutureIR;
  return NVRTC_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) nvrtcResult nvrtcGetFutureIR(nvrtcProgram prog, char* out) {
  if (out == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  if (!was_compiled(prog)) return NVRTC_ERROR_INVALID_PROGRAM;
  std::memcpy(out, kFutureIR, sizeof kFutureIR);
  return NVRTC_SUCCESS;
}
#endif
