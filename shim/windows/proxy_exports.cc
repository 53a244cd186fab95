// The exports of the proxy nvrtc64_130_0.dll: one function per row of libraries/nvrtc/api.def
// (exported by name through shim/windows/nvrtc64_130_0.def.in). Each starts the store's open ahead
// (once per process: shim/windows/store_open_ahead.h), finds the real DLL (shim/windows/real_dll.h), then forwards
// (PASS) or hands over to the cache's hooks (HOOK, libraries/nvrtc/hooks.h). Fail open: without a real NVRTC each
// returns NVRTC_ERROR_INTERNAL_ERROR (a string for nvrtcGetErrorString), and an exception never crosses the C ABI (the
// call is then forwarded uncached, as it would be without the proxy). __nvrtcCPEx, whose signature is unknown, is
// forwarded by shim/windows/cpex_forwarder.S through nvrtc_cache_windows_cpex below.
#include <nvrtc.h>
#include <windows.h>

#include <type_traits>

#include "libraries/nvrtc/hooks.h"
#include "shim/windows/core_export.h"
#include "shim/windows/real_dll.h"
#include "shim/windows/runtime.h"

namespace {

template <typename Ret>
Ret without_real_nvrtc() {
  if constexpr (std::is_same_v<Ret, nvrtcResult>) {
    return NVRTC_ERROR_INTERNAL_ERROR;
  } else {
    return "NVRTC_ERROR_INTERNAL_ERROR (nvrtc-cache: the real nvrtc64_130_0.dll was not found)";
  }
}

}  // namespace

#define NVRTC_CACHE_PROXY_PASS(ret, name, args) return real->name args;
#define NVRTC_CACHE_PROXY_HOOK(ret, name, args) NVRTC_CACHE_HOOK_OR_REAL(name, args)

// Only the functions of the 13.0 nvrtc.h (see nvrtc64_130_0.def.in).
#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)
#define NVRTC_API(kind, ret, name, params, args)                                                        \
  extern "C" ret name params {                                                                          \
    nvrtc_cache::shim::windows::WindowsRuntime::open_store_ahead();                                     \
    const nvrtc_cache::shim::interpose::RealNvrtc* real = nvrtc_cache::shim::windows::real_nvrtc_dll(); \
    if (real == nullptr || real->name == nullptr) return without_real_nvrtc<ret>();                     \
    NVRTC_CACHE_PROXY_##kind(ret, name, args)                                                           \
  }
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
#undef NVRTC_API_OUTSIDE_HEADER

// The real __nvrtcCPEx for the forwarder, or nullptr (the forwarder then returns NVRTC_ERROR_INTERNAL_ERROR).
extern "C" void* nvrtc_cache_windows_cpex() {
  const nvrtc_cache::shim::interpose::RealNvrtc* real = nvrtc_cache::shim::windows::real_nvrtc_dll();
  return real != nullptr ? real->private_functions[0] : nullptr;
}
