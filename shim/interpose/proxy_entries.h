// The proxy core's entry points for the stand-ins (proxy mode): the proxy libnvrtc.so.13 holds the one
// cache runtime of the process, and the nvJitLink and libNVVM hooks with it; the stand-ins
// libnvrtc.so.12, libnvJitLink.so.13 and .so.12 and libnvvm.so.4 beside it (shim/interpose/standin/) hold none, and
// reach the hooks through this table, which the core exports as nvrtc_cache_proxy_entries (its only export outside
// NVRTC's API and libc's). The table's functions are the core's wrappers of the rows of
// libraries/nvjitlink/api.def, nvvm_api.def and nvrtc_api.def (each finds the real library, opened by absolute
// path: shim/interpose/proxied_library.h); real_function gives the real library's other functions
// (nvJitLinkVersion, the private entry points), which the stand-ins forward untouched.
// Contract: the table is built at load, constant, never freed; its functions are thread-safe and never
// throw (the wrappers' contract, shim/interpose/wrapper_body.h); a stand-in built against another
// kProxyEntriesAbi than its core's does not use it.
#pragma once

#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <nvrtc.h>
#include <nvvm.h>

namespace nvrtc_cache::shim::interpose {

// Bumped whenever the table's layout changes (a row added to a .def table, a member added here).
inline constexpr unsigned kProxyEntriesAbi = 2;

enum class ProxiedKind : int { kNvJitLink = 0, kNvvm = 1, kNvrtc12 = 2, kNvJitLink12 = 3 };

struct ProxyEntries {
  unsigned abi = kProxyEntriesAbi;
  struct NvJitLink {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
  } nvjitlink;
  // The same for the clients of libnvJitLink.so.12 (the stand-in of that name), which reach a 12.x
  // nvJitLink only.
  struct NvJitLink12 {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
  } nvjitlink12;
  struct Nvvm {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API
  } nvvm;
  // The core's wrappers for clients of libnvrtc.so.12 (its nvrtcX@libnvrtc.so.12 exports), which reach
  // a 12.x NVRTC only: what the stand-in libnvrtc.so.12 calls.
  struct Nvrtc12 {
#define NVRTC_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
  } nvrtc12;
  // The real library's function `name` (dlsym in the library's version node), or nullptr when the
  // real library cannot be loaded or lacks it. Loads the real library on first use.
  void* (*real_function)(ProxiedKind kind, const char* name) = nullptr;
};

// The name the core exports its table under (a function returning a const ProxyEntries*).
inline constexpr const char* kProxyEntriesSymbol = "nvrtc_cache_proxy_entries";

}  // namespace nvrtc_cache::shim::interpose
