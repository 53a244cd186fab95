// The exported NVRTC API both Linux hosts share (the preloaded shim and the proxy core: interpose/
// host_mode.h), generated from libraries/nvrtc/api.def: each wrapper finds the real NVRTC of its
// caller and either forwards (PASS) or hands over to hooks:: (HOOK). The rows outside the 13.0 nvrtc.h
// are each host's own (exports_preload.cc, exports_proxy.cc). Nothing thrown inside can cross this C
// boundary.
#include <nvrtc.h>

#include "shim/interpose/export.h"
#include "libraries/nvrtc/real_nvrtc.h"
#include "shim/interpose/wrapper_body.h"

#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)  // each host's own
#define NVRTC_API(kind, ret, name, params, args)                                                               \
  NVRTC_CACHE_EXPORT ret name params NVRTC_CACHE_WRAPPER_BODY(                                                 \
      kind, ret, name, args, nvrtc_cache::shim::interpose::real_nvrtc_for_caller(__builtin_return_address(0)), \
      "libnvrtc.so.13")
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
#undef NVRTC_API_OUTSIDE_HEADER

// Per-major wrappers: a library linked against NVRTC 12 or 11.2 references nvrtcX@libnvrtc.so.12 /
// @libnvrtc.so.11.2; those bind to these (the plain exports above are the default,
// nvrtcX@@libnvrtc.so.13), which route only to a real NVRTC of that major. Two majors linked into
// one process each reach their own.
#define NVRTC_CACHE_MAJOR_WRAPPER(tag, node_index, node_name, kind, ret, name, params, args)        \
  NVRTC_CACHE_EXPORT_USED ret nvrtc_cache_##tag##_##name params NVRTC_CACHE_WRAPPER_BODY(           \
      kind, ret, name, args,                                                                        \
      nvrtc_cache::shim::interpose::real_nvrtc_for_caller(__builtin_return_address(0), node_index), \
      node_name) __asm__(".symver nvrtc_cache_" #tag "_" #name ", " #name "@" node_name);
#define NVRTC_API(kind, ret, name, params, args) \
  NVRTC_CACHE_MAJOR_WRAPPER(v12, 1, "libnvrtc.so.12", kind, ret, name, params, args)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
#define NVRTC_API(kind, ret, name, params, args) \
  NVRTC_CACHE_MAJOR_WRAPPER(v11_2, 2, "libnvrtc.so.11.2", kind, ret, name, params, args)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API

using nvrtc_cache::shim::interpose::RealNvrtc;

// The private entry points (kPrivateNvrtcFunctions), signatures unknown. Their forwarders
// (shim/interpose/arch/<architecture>/private_forwarders.S) call this with the caller's return address and
// the entry point's index, then jump to the real one with every argument register (integer and
// vector) exactly as the caller left them.
extern "C" __attribute__((visibility("hidden"), used)) void* nvrtc_cache_resolve_private(const void* caller,
                                                                                         int which) {
  if (which < 0 || which >= nvrtc_cache::shim::interpose::kPrivateNvrtcFunctionCount) return nullptr;
  const RealNvrtc* real = nvrtc_cache::shim::interpose::real_nvrtc_for_caller(caller);
  return real ? real->private_functions[which] : nullptr;
}
