// Which of the two Linux hosts this library is: the preloaded shim (libnvrtc-cache.so, LD_PRELOAD),
// which finds each caller's real library in its scope, or the proxy core (lib/nvrtc-cache/proxy/
// libnvrtc.so.13, `run --proxy`, activate()), which opens the real libraries by absolute path
// (shim/interpose/proxied_library.h). Everything else is compiled once for both; the answer comes
// from the one file each host has of its own (interpose/exports_preload.cc, exports_proxy.cc).
// Contract: constant for the life of the process; thread-safe; no I/O.
#pragma once

namespace nvrtc_cache::shim::interpose {

bool proxy_mode();

}  // namespace nvrtc_cache::shim::interpose
