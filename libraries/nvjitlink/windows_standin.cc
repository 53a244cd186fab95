// The stand-in nvJitLink_130_0.dll of the Windows proxy: nvJitLink 13.0's every export (each row of
// libraries/nvjitlink/api.def that 13.0 has, under its plain name and as __<name>_13_0, with
// nvJitLinkVersion and the private __nvJitLinkAPI: libraries/nvjitlink/windows_standin.def.in), each
// forwarded to the proxy core (shim/windows/standin_core.h), which answers through its
// nvrtc_cache_<function> exports (libraries/nvjitlink/windows_exports.cc). Without a core, each call
// goes straight to the real nvJitLink (libraries/nvjitlink/windows_real_dll.h), uncached; without either,
// NVJITLINK_ERROR_INTERNAL. The export nvrtc_cache_standin (shim/windows/standin_core.cc) tells this
// DLL from a real nvJitLink.
// Contract: thread-safe (each function resolved once); the thread's last-error value is kept across
// the resolution; nothing runs in DllMain.
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <windows.h>

#include "libraries/nvjitlink/windows_real_dll.h"
#include "shim/windows/standin_core.h"

namespace {

using nvrtc_cache::shim::windows::core_or_real;
using nvrtc_cache::shim::windows::passed_through_core;
using nvrtc_cache::shim::windows::real_nvjitlink_function;

void* passed(const char* name) {
  return passed_through_core("nvrtc_cache_nvjitlink_function", name, &real_nvjitlink_function);
}

}  // namespace

#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                                                           \
  extern "C" ret name params {                                                                                      \
    using Fn = ret(*) params;                                                                                       \
    static const Fn fn = reinterpret_cast<Fn>(core_or_real("nvrtc_cache_" #name, #name, &real_nvjitlink_function)); \
    if (fn == nullptr) return NVJITLINK_ERROR_INTERNAL;                                                             \
    return fn args;                                                                                                 \
  }
#define NVJITLINK_API_SINCE_13_1(kind, ret, name, params, args)  // not in nvJitLink 13.0
#include "libraries/nvjitlink/api.def"
#undef NVJITLINK_API_SINCE_13_1
#undef HANDLE_LIBRARY_API

extern "C" nvJitLinkResult nvJitLinkVersion(unsigned int* major, unsigned int* minor) {
  using Fn = nvJitLinkResult (*)(unsigned int*, unsigned int*);
  static const Fn fn = reinterpret_cast<Fn>(passed("nvJitLinkVersion"));
  return fn != nullptr ? fn(major, minor) : NVJITLINK_ERROR_INTERNAL;
}

// For the private forwarder (libraries/nvjitlink/windows_private_forwarder.S).
extern "C" void* nvrtc_cache_standin_private() {
  static void* const fn = passed("__nvJitLinkAPI");
  return fn;
}
