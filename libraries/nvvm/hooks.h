// hooks for libNVVM: the shim's handling of the functions of libraries/nvvm/api.def, libNVVM
// described to the handle lifecycle (libraries/nvvm/hooks.cc), called by shim/interpose/'s wrappers.
// Each takes the caller's real libNVVM first, then libNVVM's own arguments.
// Contract: callable from any thread; never throw (the wrappers guard them anyway); return exactly
// what the real libNVVM would have returned; preserve errno except where libNVVM set it.
#pragma once

#include <nvvm.h>

#include "libraries/nvrtc/hooks.h"
#include "libraries/nvvm/real_nvvm.h"

namespace nvrtc_cache::shim::hooks {

#define NVRTC_CACHE_DECLARE_PASS(ret, name, params, args)
#define NVRTC_CACHE_DECLARE_HOOK(ret, name, params, args) \
  ret name(const interpose::RealNvvm& real, NVRTC_CACHE_UNPAREN params);
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) NVRTC_CACHE_DECLARE_##kind(ret, name, params, args)
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API
#undef NVRTC_CACHE_DECLARE_PASS
#undef NVRTC_CACHE_DECLARE_HOOK

}  // namespace nvrtc_cache::shim::hooks
