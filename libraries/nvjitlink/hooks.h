// hooks for nvJitLink: the shim's handling of the functions marked HOOK in
// libraries/nvjitlink/api.def, the link lifecycle's entry points (libraries/nvjitlink/hooks.cc),
// called by shim/interpose/'s wrappers. Each takes the caller's real nvJitLink first, then
// nvJitLink's own arguments.
// Contract: callable from any thread; never throw (the wrappers guard them anyway); return exactly
// what the real nvJitLink would have returned; preserve errno except where nvJitLink set it.
#pragma once

#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>

#include "libraries/nvrtc/hooks.h"
#include "libraries/nvjitlink/real_nvjitlink.h"

namespace nvrtc_cache::shim::hooks {

#define NVRTC_CACHE_DECLARE_PASS(ret, name, params, args)
#define NVRTC_CACHE_DECLARE_HOOK(ret, name, params, args) \
  ret name(const interpose::RealNvJitLink& real, NVRTC_CACHE_UNPAREN params);
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) NVRTC_CACHE_DECLARE_##kind(ret, name, params, args)
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
#undef NVRTC_CACHE_DECLARE_PASS
#undef NVRTC_CACHE_DECLARE_HOOK

}  // namespace nvrtc_cache::shim::hooks
