// The stand-in libnvrtc.so.12 (proxy mode): NVRTC 12's every function, in its version node
// (standin12.map), for the clients of a 12.x NVRTC (a program linked against libnvrtc.so.12,
// CuPy for CUDA 12, a dlopen or ctypes load by that soname). Each row of libraries/nvrtc/api.def
// is forwarded to the proxy core's per-major wrapper (standin_core.h, ProxyEntries::nvrtc12), whose real
// NVRTC is a 12.x one (shim/interpose/proxied_library.h: kProxiedNvrtc12), and is found by dlsym only
// where that real NVRTC has it; the private __nvrtcCPEx is forwarded untouched.
#include <nvrtc.h>

#include <type_traits>

#include "shim/interpose/standin/standin_core.h"

namespace {

using nvrtc_cache::shim::interpose::ProxiedKind;
constexpr const char* kWhat = "libnvrtc.so.12";

static_assert(NVRTC_ERROR_INTERNAL_ERROR == 11, "the private forwarder's failure code below");
constexpr const char* kPassed[] = {"__nvrtcCPEx"};
constexpr int kPassedCount = 1;

// What a call answers when there is no core: NVRTC's own failure.
template <typename Result>
Result failed() {
  if constexpr (std::is_pointer_v<Result>) {
    return "NVRTC_ERROR_INTERNAL_ERROR";  // nvrtcGetErrorString
  } else {
    return NVRTC_ERROR_INTERNAL_ERROR;
  }
}

}  // namespace

extern "C" {
__attribute__((visibility("hidden"), used)) void* nvrtc_cache_standin_nvrtc12_passed[kPassedCount] = {};
}

namespace {

__attribute__((constructor)) void load_at_start() {
  nvrtc_cache::shim::standin::resolve_real_functions(kWhat, ProxiedKind::kNvrtc12, kPassed,
                                                     nvrtc_cache_standin_nvrtc12_passed, kPassedCount);
}

}  // namespace

// Each name is an indirect function answering as the real NVRTC 12 would (standin_core.h): a 12.9
// NVRTC has no nvrtcGetTileIR.
#define NVRTC_API(kind, ret, name, params, args)                           \
  static ret standin_##name params {                                       \
    const auto* entries = nvrtc_cache::shim::standin::core_entries(kWhat); \
    return entries ? entries->nvrtc12.name args : failed<ret>();           \
  }                                                                        \
  NVRTC_CACHE_STANDIN_NAME(kWhat, ProxiedKind::kNvrtc12, "nvrtcVersion", ret, name, name, params)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API

NVRTC_CACHE_STANDIN_JUMP(__nvrtcCPEx, nvrtc_cache_standin_nvrtc12_passed, 0, 11)
