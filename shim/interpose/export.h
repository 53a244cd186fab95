// The attributes of a symbol the shim exports to the host process (NVRTC's API, the libc entry
// points it observes). The version scripts (exports.map, proxy_exports.map) list each one; a
// symbol not marked so stays hidden (the build's default visibility is hidden).
#pragma once

// A C symbol visible outside the shim.
#define NVRTC_CACHE_EXPORT extern "C" __attribute__((visibility("default")))
// Same, kept even when nothing in the shim references it (versioned aliases bound with .symver).
#define NVRTC_CACHE_EXPORT_USED extern "C" __attribute__((visibility("default"), used))
