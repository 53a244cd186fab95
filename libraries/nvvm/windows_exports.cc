// libNVVM's calls in the Windows proxy core (nvrtc64_130_0.dll): one export per row of
// libraries/nvvm/api.def under the name nvrtc_cache_<function> (shim/windows/nvrtc64_130_0.def.in,
// shim/windows/core_export.h), which the stand-in nvvm64_40_0.dll (libraries/nvvm/windows_standin.cc)
// forwards each of its functions to; over the hooks (libraries/nvvm/hooks.h) and the handle lifecycle,
// with the real libNVVM of libraries/nvvm/windows_real_dll.h. Without one each returns
// NVVM_ERROR_PROGRAM_CREATION_FAILURE.
#include <nvvm.h>
#include <windows.h>

#include "libraries/nvvm/hooks.h"
#include "shim/windows/core_export.h"
#include "libraries/nvvm/windows_real_dll.h"

#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                                     \
  NVRTC_CACHE_CORE_EXPORT(ret, name, params, args, nvrtc_cache::shim::windows::real_nvvm_dll, \
                          NVVM_ERROR_PROGRAM_CREATION_FAILURE)
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API

// The real libNVVM's functions the cache does not handle (nvvmVersion, nvvmIRVersion,
// nvvmGetErrorString, nvvmDisableConcurrentAPI, __nvvmHandle, __nvvmHandleTarget), for the stand-in
// to forward to untouched; nullptr without a real libNVVM.
extern "C" void* nvrtc_cache_nvvm_function(const char* name) {
  return nvrtc_cache::shim::windows::real_nvvm_function(name);
}
