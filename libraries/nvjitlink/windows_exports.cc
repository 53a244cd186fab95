// nvJitLink's calls in the Windows proxy core (nvrtc64_130_0.dll): one export per row of
// libraries/nvjitlink/api.def under the name nvrtc_cache_<function> (shim/windows/nvrtc64_130_0.def.in),
// which the stand-in nvJitLink_130_0.dll (shim/windows/nvjitlink_standin.cc) forwards each of its
// functions to, so that a process's NVRTC and nvJitLink calls share one runtime and one store. Each
// starts the store's open ahead, finds the real nvJitLink (shim/windows/real_nvjitlink_dll.h) and
// hands over to the hooks (libraries/nvjitlink/hooks.h) over the handle lifecycle. Fail open: without
// a real nvJitLink each returns NVJITLINK_ERROR_INTERNAL; an exception never crosses the C ABI (the
// call is then made uncached); with the cache disabled every call goes straight to the real one.
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <windows.h>

#include "libraries/nvjitlink/hooks.h"
#include "shim/windows/real_nvjitlink_dll.h"
#include "shim/windows/runtime.h"

#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                                                   \
  extern "C" ret nvrtc_cache_##name params {                                                                \
    nvrtc_cache::shim::windows::WindowsRuntime::open_store_ahead();                                         \
    const nvrtc_cache::shim::interpose::RealNvJitLink* real = nvrtc_cache::shim::windows::real_nvjitlink_dll(); \
    if (real == nullptr || real->name == nullptr) return NVJITLINK_ERROR_INTERNAL;                          \
    if (nvrtc_cache::shim::windows::WindowsRuntime::instance().enabled()) {                                 \
      try {                                                                                                 \
        return nvrtc_cache::shim::hooks::name(*real, NVRTC_CACHE_UNPAREN args);                             \
      } catch (...) {                                                                                       \
      }                                                                                                     \
    }                                                                                                       \
    return real->name args;                                                                                 \
  }
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API

// The real nvJitLink's functions the cache does not handle (nvJitLinkVersion, __nvJitLinkAPI), for the
// stand-in to forward to untouched; nullptr without a real nvJitLink.
extern "C" void* nvrtc_cache_nvjitlink_function(const char* name) {
  return nvrtc_cache::shim::windows::real_nvjitlink_function(name);
}
