// The proxy core's own exports (interpose/host_mode.h): the NVRTC rows outside the 13.0 nvrtc.h
// (nvrtc_api.def's NVRTC_API_OUTSIDE_HEADER rows) as GNU indirect functions, beside every other row
// (interpose/exports.cc).
#include <dlfcn.h>
#include <nvrtc.h>
#include <sys/auxv.h>

#include <atomic>
#include <cstdint>

#include "shim/interpose/export.h"
#include "shim/interpose/host_mode.h"
#include "shim/interpose/ifunc_caller.h"
#include "libraries/nvrtc/real_nvrtc.h"
#include "shim/interpose/wrapper_body.h"

namespace nvrtc_cache::shim::interpose {
bool proxy_mode() { return true; }
}  // namespace nvrtc_cache::shim::interpose

// Proxy mode: the proxy is the libnvrtc.so.13 clients open, so `dlsym(handle, name)` lands on its
// exports. It exports every function of every 12.x/13.x NVRTC, but the functions outside the 13.0
// nvrtc.h (nvrtc_api.def's NVRTC_API_OUTSIDE_HEADER rows) are GNU indirect functions whose resolver
// answers a dlsym exactly as the real library would: the wrapper where the real NVRTC has the
// function, NULL where it does not (a client probing for nvrtcGetTileIR with 13.0 finds none). A
// binding made by the dynamic loader (a linked client's PLT or GOT entry) always gets the wrapper,
// which answers a call to a function the real NVRTC lacks as the loader would have
// (function_missing_in_real_nvrtc): at load time the real NVRTC may not be loadable yet.
namespace {

std::atomic<bool> proxy_constructed{false};
__attribute__((constructor)) void mark_proxy_constructed() { proxy_constructed.store(true); }

bool resolving_for_the_loader(const void* resolver_caller) {
  return nvrtc_cache::shim::interpose::resolver_called_by_the_loader(resolver_caller, proxy_constructed.load());
}

}  // namespace

#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)                                                \
  static ret nvrtc_cache_proxy_##name params NVRTC_CACHE_WRAPPER_BODY(                                         \
      kind, ret, name, args, nvrtc_cache::shim::interpose::real_nvrtc_for_caller(__builtin_return_address(0)), \
      "libnvrtc.so.13") extern "C" __attribute__((used)) auto nvrtc_cache_resolve_##name()                     \
      ->ret(*) params {                                                                                        \
    auto* wrapper = &nvrtc_cache_proxy_##name;                                                                 \
    if (resolving_for_the_loader(__builtin_return_address(0))) return wrapper;                                 \
    const nvrtc_cache::shim::interpose::RealNvrtc* real =                                                      \
        nvrtc_cache::shim::interpose::real_nvrtc_for_caller(__builtin_return_address(0));                      \
    return real != nullptr && real->name != nullptr ? wrapper : nullptr;                                       \
  }                                                                                                            \
  NVRTC_CACHE_EXPORT ret name params __attribute__((ifunc("nvrtc_cache_resolve_" #name)));

#define NVRTC_API(kind, ret, name, params, args)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
#undef NVRTC_API_OUTSIDE_HEADER
