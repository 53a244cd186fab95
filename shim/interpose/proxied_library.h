// Proxy mode (NVRTC_CACHE_PROXY): the real NVRTC, nvJitLink and libNVVM the proxy core (the stand-in
// libnvrtc.so.13) forwards to, each opened by absolute path: the variable's value when set, else the
// first library of the proxy's major the run-time search finds (shim/interpose/library_search.h: the
// interpreter's wheels, conda, the loader's directories but the proxy's own, CUDA_PATH/CUDA_HOME,
// /usr/local/cuda). The stand-ins libnvJitLink.so.13 and libnvvm.so.4 (shim/interpose/standin/)
// reach them only through the core (shim/interpose/proxy_entries.h).
// Contract: thread-safe; never throws; the search runs once per library (first use); a library that
// cannot be found or opened is said once (an error in the log) and answered with nullptr, every
// time, without retrying the load in a loop.
#pragma once

#include <string>

#include "shim/interpose/library_search.h"

namespace nvrtc_cache::shim::interpose {

struct ProxiedLibrary {
  RealLibrary library;
  const char* soname;    // the one the proxy stands in for: only a real library of that major will do
  const char* node;      // the version node its functions are in, or nullptr
};

#ifdef NVRTC_CACHE_PROXY
inline constexpr ProxiedLibrary kProxiedNvrtc = {RealLibrary::kNvrtc, "libnvrtc.so.13", nullptr};
inline constexpr ProxiedLibrary kProxiedNvJitLink = {RealLibrary::kNvJitLink, "libnvJitLink.so.13",
                                                     "libnvJitLink.so.13"};
inline constexpr ProxiedLibrary kProxiedNvvm = {RealLibrary::kNvvm, "libnvvm.so.4", nullptr};
#endif

// The path of the real library: the variable's value, else the search's first find ("" if none).
std::string proxied_library_path(const ProxiedLibrary& library);
// The real library's handle (dlopen RTLD_NOW | RTLD_LOCAL, never closed), or nullptr.
void* open_proxied_library(const ProxiedLibrary& library);
// The function `name` of the real library (in its version node where it has one), or nullptr.
void* proxied_function(const ProxiedLibrary& library, const char* name);

}  // namespace nvrtc_cache::shim::interpose
