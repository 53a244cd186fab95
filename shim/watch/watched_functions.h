// watched_functions: the table of shim/watch/watched_libc.def as data, for code that redirects a
// library's imports to the hooks (shim/watch/import_patch.h). Internal to shim/watch.
// Contract: constant after load; callable from any thread. `hook` is the shim's own definition
// (bound inside the shim, never through the global scope), `real()` the libc function that hook
// forwards to (resolved at load; nullptr if libc has none).
#pragma once

#include <cstddef>

namespace nvrtc_cache::shim::watch {

struct WatchedFunction {
  const char* name;
  const char* version;  // the glibc version node of watched_libc.def
  void* hook;
};

inline constexpr std::size_t kWatchedFunctionCount = 0
#define NVRTC_CACHE_WATCHED(name, version) +1
#include "shim/watch/watched_libc.def"
#undef NVRTC_CACHE_WATCHED
    ;

// The table, in watched_libc.def's order.
const WatchedFunction* watched_functions();
// The function watched_functions()[index].hook forwards to.
void* real_libc(std::size_t index);

}  // namespace nvrtc_cache::shim::watch
