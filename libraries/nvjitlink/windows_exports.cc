// nvJitLink's calls in the Windows proxy core (nvrtc64_130_0.dll): one export per row of
// libraries/nvjitlink/api.def under the name nvrtc_cache_<function> (shim/windows/nvrtc64_130_0.def.in,
// shim/windows/core_export.h), which the stand-in nvJitLink_130_0.dll (libraries/nvjitlink/windows_standin.cc)
// forwards each of its functions to, so that a process's NVRTC and nvJitLink calls share one runtime
// and one store; over the hooks (libraries/nvjitlink/hooks.h) and the handle lifecycle, with the real
// nvJitLink of libraries/nvjitlink/windows_real_dll.h. Without one each returns NVJITLINK_ERROR_INTERNAL.
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <windows.h>

#include "libraries/nvjitlink/hooks.h"
#include "shim/windows/core_export.h"
#include "libraries/nvjitlink/windows_real_dll.h"

#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                                          \
  NVRTC_CACHE_CORE_EXPORT(ret, name, params, args, nvrtc_cache::shim::windows::real_nvjitlink_dll, \
                          NVJITLINK_ERROR_INTERNAL)
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API

// The real nvJitLink's functions the cache does not handle (nvJitLinkVersion, __nvJitLinkAPI), for the
// stand-in to forward to untouched; nullptr without a real nvJitLink.
extern "C" void* nvrtc_cache_nvjitlink_function(const char* name) {
  return nvrtc_cache::shim::windows::real_nvjitlink_function(name);
}
