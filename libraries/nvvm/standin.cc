// The stand-in libnvvm.so.4 (proxy mode): libNVVM's every function, unversioned as libNVVM's own
// (standin.map): the rows of libraries/nvvm/api.def forwarded to the proxy core's hooks
// (standin_core.h); the others (nvvmVersion, nvvmIRVersion, nvvmGetErrorString, and those of unknown
// signature: nvvmDisableConcurrentAPI, __nvvmHandle, __nvvmHandleTarget) forwarded untouched to the real
// libNVVM the core opened.
#include <nvvm.h>

#include "shim/interpose/export.h"
#include "shim/interpose/standin/standin_core.h"

namespace {

using nvrtc_cache::shim::interpose::ProxiedKind;
constexpr const char* kWhat = "libnvvm.so.4";

static_assert(NVVM_ERROR_INVALID_PROGRAM == 5, "the private forwarders' failure code below");
constexpr const char* kPassed[] = {"nvvmVersion",        "nvvmIRVersion",
                                   "nvvmGetErrorString", "nvvmDisableConcurrentAPI",
                                   "__nvvmHandle",       "__nvvmHandleTarget"};
constexpr int kPassedCount = 6;

}  // namespace

extern "C" {
__attribute__((visibility("hidden"), used)) void* nvrtc_cache_standin_nvvm_passed[kPassedCount] = {};
}

namespace {

__attribute__((constructor)) void load_at_start() {
  nvrtc_cache::shim::standin::resolve_real_functions(kWhat, ProxiedKind::kNvvm, kPassed,
                                                     nvrtc_cache_standin_nvvm_passed, kPassedCount);
}

void* passed(int which) { return __atomic_load_n(&nvrtc_cache_standin_nvvm_passed[which], __ATOMIC_ACQUIRE); }

}  // namespace

#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                  \
  NVRTC_CACHE_EXPORT ret name params {                                     \
    const auto* entries = nvrtc_cache::shim::standin::core_entries(kWhat); \
    return entries ? entries->nvvm.name args : NVVM_ERROR_INVALID_PROGRAM; \
  }
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API

NVRTC_CACHE_EXPORT nvvmResult nvvmVersion(int* major, int* minor) {
  auto* real = reinterpret_cast<nvvmResult (*)(int*, int*)>(passed(0));
  return real ? real(major, minor) : NVVM_ERROR_INVALID_PROGRAM;
}

NVRTC_CACHE_EXPORT nvvmResult nvvmIRVersion(int* major_ir, int* minor_ir, int* major_dbg, int* minor_dbg) {
  auto* real = reinterpret_cast<nvvmResult (*)(int*, int*, int*, int*)>(passed(1));
  return real ? real(major_ir, minor_ir, major_dbg, minor_dbg) : NVVM_ERROR_INVALID_PROGRAM;
}

// Without a real libNVVM, the names of nvvm.h's results (what libNVVM 13.0 answers).
NVRTC_CACHE_EXPORT const char* nvvmGetErrorString(nvvmResult result) {
  if (auto* real = reinterpret_cast<const char* (*)(nvvmResult)>(passed(2))) return real(result);
  switch (result) {
    case NVVM_SUCCESS:
      return "NVVM_SUCCESS";
    case NVVM_ERROR_OUT_OF_MEMORY:
      return "NVVM_ERROR_OUT_OF_MEMORY";
    case NVVM_ERROR_PROGRAM_CREATION_FAILURE:
      return "NVVM_ERROR_PROGRAM_CREATION_FAILURE";
    case NVVM_ERROR_IR_VERSION_MISMATCH:
      return "NVVM_ERROR_IR_VERSION_MISMATCH";
    case NVVM_ERROR_INVALID_INPUT:
      return "NVVM_ERROR_INVALID_INPUT";
    case NVVM_ERROR_INVALID_PROGRAM:
      return "NVVM_ERROR_INVALID_PROGRAM";
    case NVVM_ERROR_INVALID_IR:
      return "NVVM_ERROR_INVALID_IR";
    case NVVM_ERROR_INVALID_OPTION:
      return "NVVM_ERROR_INVALID_OPTION";
    case NVVM_ERROR_NO_MODULE_IN_PROGRAM:
      return "NVVM_ERROR_NO_MODULE_IN_PROGRAM";
    case NVVM_ERROR_COMPILATION:
      return "NVVM_ERROR_COMPILATION";
    case NVVM_ERROR_CANCELLED:
      return "NVVM_ERROR_CANCELLED";
  }
  return "Unknown error";
}

NVRTC_CACHE_STANDIN_JUMP(nvvmDisableConcurrentAPI, nvrtc_cache_standin_nvvm_passed, 24, 5)
NVRTC_CACHE_STANDIN_JUMP(__nvvmHandle, nvrtc_cache_standin_nvvm_passed, 32, 5)
NVRTC_CACHE_STANDIN_JUMP(__nvvmHandleTarget, nvrtc_cache_standin_nvvm_passed, 40, 5)
