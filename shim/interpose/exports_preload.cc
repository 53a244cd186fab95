// The preloaded shim's own exports (interpose/host_mode.h): the NVRTC rows outside the 13.0 nvrtc.h
// (nvrtc_api.def's NVRTC_API_OUTSIDE_HEADER rows) as plain functions, as every other row
// (interpose/exports.cc): a client finds the shim's only where it looks in the global scope, and each
// wrapper answers a call to a function the caller's real NVRTC lacks as that NVRTC would.
#include <nvrtc.h>

#include "shim/interpose/export.h"
#include "shim/interpose/host_mode.h"
#include "libraries/nvrtc/real_nvrtc.h"
#include "shim/interpose/wrapper_body.h"

namespace nvrtc_cache::shim::interpose {
bool proxy_mode() { return false; }
}  // namespace nvrtc_cache::shim::interpose

#define NVRTC_API(kind, ret, name, params, args)
#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)                                                \
  NVRTC_CACHE_EXPORT ret name params NVRTC_CACHE_WRAPPER_BODY(                                                 \
      kind, ret, name, args, nvrtc_cache::shim::interpose::real_nvrtc_for_caller(__builtin_return_address(0)), \
      "libnvrtc.so.13")
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
#undef NVRTC_API_OUTSIDE_HEADER
