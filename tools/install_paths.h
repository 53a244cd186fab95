// Where the installed pieces are, relative to this executable (<prefix>/bin/nvrtc-cache): the same
// layout in the install tree and the build tree. Contract: reads /proc/self/exe; no state.
#pragma once

#include <string>

namespace nvrtc_cache::tools {

// The install prefix ("" if /proc/self/exe cannot be read).
std::string prefix();
// $NVRTC_CACHE_SHIM if set; else preload mode: <prefix>/lib/libnvrtc-cache.so; proxy mode: the stand-in
// <prefix>/lib/nvrtc-cache/proxy/libnvrtc.so.13.
std::string shim_path(bool proxy);
// This executable.
std::string self_path();

}  // namespace nvrtc_cache::tools
