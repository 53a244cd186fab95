// Whether a GNU indirect function's resolver was called by the dynamic loader (a relocation, lazy
// binding) rather than by dlsym: the proxy's exports outside the 13.0 header (exports_proxy.cc) and
// the stand-ins' (standin/standin_core.cc) answer a dlsym as the real library would, and the
// loader always with the wrapper. Header-only: each library that has such exports keeps its own
// `constructed` flag (set by its constructor: before it, the relocations that precede every
// constructor are the loader's).
// Contract: async-signal-unsafe only in dladdr; thread-safe; never throws; no filesystem access.
#pragma once

#include <dlfcn.h>
#include <sys/auxv.h>

#include <cstdint>

namespace nvrtc_cache::shim::interpose {

inline bool resolver_called_by_the_loader(const void* resolver_caller, bool constructed) {
  if (!constructed) return true;  // startup relocations: nothing may be loaded yet
  const unsigned long loader_base = getauxval(AT_BASE);
  Dl_info info;
  if (loader_base == 0 || dladdr(resolver_caller, &info) == 0) return true;
  return reinterpret_cast<std::uintptr_t>(info.dli_fbase) == loader_base;
}

}  // namespace nvrtc_cache::shim::interpose
