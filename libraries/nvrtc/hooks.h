// hooks: the shim's handling of the NVRTC functions marked HOOK in libraries/nvrtc/api.def.
// Each takes the caller's real NVRTC first, then NVRTC's own arguments. They are the program
// lifecycle's entry points (create and compile: libraries/nvrtc/hooks.cc, over the OS's host; the
// others: libraries/nvrtc/compile_steps.cc, libraries/nvrtc/getters.cc), called by the hosts' exports.
// Contract: callable from any thread; never throw (exports.cc guards them anyway); return exactly
// what the real NVRTC would have returned; preserve the caller's error state (errno, the last-error
// value) except where the real NVRTC set it.
#pragma once

#include <nvrtc.h>

#include "libraries/nvrtc/real_nvrtc.h"

#define NVRTC_CACHE_UNPAREN(...) __VA_ARGS__

namespace nvrtc_cache::shim::hooks {

#define NVRTC_CACHE_DECLARE_PASS(ret, name, params, args)
#define NVRTC_CACHE_DECLARE_HOOK(ret, name, params, args) \
  ret name(const interpose::RealNvrtc& real, NVRTC_CACHE_UNPAREN params);
#define NVRTC_API(kind, ret, name, params, args) NVRTC_CACHE_DECLARE_##kind(ret, name, params, args)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
#undef NVRTC_CACHE_DECLARE_PASS
#undef NVRTC_CACHE_DECLARE_HOOK

}  // namespace nvrtc_cache::shim::hooks
