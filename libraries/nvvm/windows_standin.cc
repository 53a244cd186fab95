// The stand-in nvvm64_40_0.dll of the Windows proxy: libNVVM 13.0's every export (each row of
// libraries/nvvm/api.def, nvvmVersion, nvvmIRVersion, nvvmGetErrorString, and the undocumented
// nvvmDisableConcurrentAPI, __nvvmHandle and __nvvmHandleTarget: libraries/nvvm/windows_standin.def.in),
// each forwarded to the proxy core (shim/windows/standin_core.h), which answers the table's through
// its nvrtc_cache_<function> exports (libraries/nvvm/windows_exports.cc) and hands out the rest from
// the real libNVVM it loaded. Without a core, each call goes straight to the real libNVVM
// (libraries/nvvm/windows_real_dll.h), uncached; without either, NVVM_ERROR_PROGRAM_CREATION_FAILURE
// (nvvmGetErrorString: a string saying so). The export nvrtc_cache_standin
// (shim/windows/standin_core.cc) tells it from a real libNVVM.
// Contract: thread-safe (each function resolved once); the thread's last-error value is kept across
// the resolution; nothing runs in DllMain.
#include <nvvm.h>
#include <windows.h>

#include "libraries/nvvm/windows_real_dll.h"
#include "shim/windows/standin_core.h"

namespace {

using nvrtc_cache::shim::windows::core_or_real;
using nvrtc_cache::shim::windows::passed_through_core;
using nvrtc_cache::shim::windows::real_nvvm_function;

void* passed(const char* name) { return passed_through_core("nvrtc_cache_nvvm_function", name, &real_nvvm_function); }

}  // namespace

#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                                                      \
  extern "C" ret name params {                                                                                 \
    using Fn = ret(*) params;                                                                                  \
    static const Fn fn = reinterpret_cast<Fn>(core_or_real("nvrtc_cache_" #name, #name, &real_nvvm_function)); \
    if (fn == nullptr) return NVVM_ERROR_PROGRAM_CREATION_FAILURE;                                             \
    return fn args;                                                                                            \
  }
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API

extern "C" nvvmResult nvvmVersion(int* major, int* minor) {
  using Fn = nvvmResult (*)(int*, int*);
  static const Fn fn = reinterpret_cast<Fn>(passed("nvvmVersion"));
  return fn != nullptr ? fn(major, minor) : NVVM_ERROR_PROGRAM_CREATION_FAILURE;
}

extern "C" nvvmResult nvvmIRVersion(int* major_ir, int* minor_ir, int* major_dbg, int* minor_dbg) {
  using Fn = nvvmResult (*)(int*, int*, int*, int*);
  static const Fn fn = reinterpret_cast<Fn>(passed("nvvmIRVersion"));
  return fn != nullptr ? fn(major_ir, minor_ir, major_dbg, minor_dbg) : NVVM_ERROR_PROGRAM_CREATION_FAILURE;
}

extern "C" const char* nvvmGetErrorString(nvvmResult result) {
  using Fn = const char* (*)(nvvmResult);
  static const Fn fn = reinterpret_cast<Fn>(passed("nvvmGetErrorString"));
  return fn != nullptr ? fn(result) : "NVVM_ERROR_PROGRAM_CREATION_FAILURE (nvrtc-cache: no real nvvm64_40_0.dll)";
}

// For the private forwarders (libraries/nvvm/windows_private_forwarders.S).
extern "C" void* nvrtc_cache_standin_nvvm_handle() {
  static void* const fn = passed("__nvvmHandle");
  return fn;
}
extern "C" void* nvrtc_cache_standin_nvvm_handle_target() {
  static void* const fn = passed("__nvvmHandleTarget");
  return fn;
}
extern "C" void* nvrtc_cache_standin_nvvm_disable_concurrent_api() {
  static void* const fn = passed("nvvmDisableConcurrentAPI");
  return fn;
}
