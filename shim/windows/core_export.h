// NVRTC_CACHE_CORE_EXPORT: one function of a handle library as the Windows proxy core exports it to
// the library's stand-in (nvrtc_cache_<name>: libraries/nvjitlink/windows_exports.cc,
// libraries/nvvm/windows_exports.cc). It starts the store's open ahead, finds the real library
// (`real_library()`: a table, or nullptr), and hands over to the cache's hook (hooks::<name>) — or,
// with the cache disabled or an exception escaping the hook, to the real function; without a real
// library it returns `failure`. Nothing thrown crosses the C ABI.
#pragma once

#include "shim/windows/runtime.h"

// The hook of `name` with the real library `real` (a pointer in scope), or the real function: the
// body every proxy export of a HOOK row ends with (NVRTC's own exports too: proxy_exports.cc).
#define NVRTC_CACHE_HOOK_OR_REAL(name, args)                                  \
  if (nvrtc_cache::shim::windows::WindowsRuntime::instance().enabled()) {     \
    try {                                                                     \
      return nvrtc_cache::shim::hooks::name(*real, NVRTC_CACHE_UNPAREN args); \
    } catch (...) {                                                           \
    }                                                                         \
  }                                                                           \
  return real->name args;

#define NVRTC_CACHE_CORE_EXPORT(ret, name, params, args, real_library, failure) \
  extern "C" ret nvrtc_cache_##name params {                                    \
    nvrtc_cache::shim::windows::WindowsRuntime::open_store_ahead();             \
    const auto* real = real_library();                                          \
    if (real == nullptr || real->name == nullptr) return failure;               \
    NVRTC_CACHE_HOOK_OR_REAL(name, args)                                        \
  }
