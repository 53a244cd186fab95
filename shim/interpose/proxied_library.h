// Proxy mode (NVRTC_CACHE_PROXY): the real nvJitLink and libNVVM the proxy core (the stand-in
// libnvrtc.so.13) forwards to, each opened by absolute path: the variable's value when set, else the
// toolkit's library the proxy was built against. The stand-ins libnvJitLink.so.13 and libnvvm.so.4
// (shim/interpose/standin/) reach them only through the core (shim/interpose/proxy_entries.h).
// Contract: thread-safe; never throws; a library that cannot be opened is said once (an error in
// the log) and answered with nullptr, every time, without retrying the load in a loop.
#pragma once

namespace nvrtc_cache::shim::interpose {

struct ProxiedLibrary {
  const char* variable;  // NVRTC_CACHE_REAL_NVJITLINK
  const char* fallback;  // the toolkit's library, an absolute path
  const char* what;      // "nvJitLink", for the log
  const char* node;      // the version node its functions are in, or nullptr
};

#ifdef NVRTC_CACHE_PROXY
inline constexpr ProxiedLibrary kProxiedNvJitLink = {"NVRTC_CACHE_REAL_NVJITLINK", NVRTC_CACHE_REAL_NVJITLINK_PATH,
                                                     "nvJitLink", "libnvJitLink.so.13"};
inline constexpr ProxiedLibrary kProxiedNvvm = {"NVRTC_CACHE_REAL_NVVM", NVRTC_CACHE_REAL_NVVM_PATH, "libNVVM",
                                                nullptr};
#endif

// The real library's handle (dlopen RTLD_NOW | RTLD_LOCAL, never closed), or nullptr.
void* open_proxied_library(const ProxiedLibrary& library);
// The function `name` of the real library (in its version node where it has one), or nullptr.
void* proxied_function(const ProxiedLibrary& library, const char* name);

}  // namespace nvrtc_cache::shim::interpose
