// Loaded objects as the dynamic loader sees them: which object an address lies in, the shim's own,
// and a handle on a caller's lookup scope. Shared by the real-library registries of every
// intercepted library (libraries/nvrtc/real_nvrtc.cc, libraries/nvjitlink/real_nvjitlink.cc).
// Contract: thread-safe; each call may take the loader's lock (dladdr, dlopen), so none is made
// while holding a lock fork() takes; never throws.
#pragma once

#include <link.h>

#include <string>

namespace nvrtc_cache::shim::interpose {

// The link map of the object containing `address`, or nullptr.
const link_map* link_map_of(const void* address);
// The path a real library was loaded from: the name in its link map `map`, or that of the object
// holding `code` (empty when neither says).
std::string library_path_of(const void* map, const void* code);
// The shim's own link map (looked up once).
const link_map* shim_link_map();
// True if `address` lies inside the shim.
bool in_shim(const void* address);
// A handle whose dlsym/dlvsym searches the caller's own scope (its local scope for an RTLD_LOCAL
// load, the global scope for the main program); nullptr when there is none. dlclose() it.
void* scope_handle_of(const link_map* caller);
// The function `name` of `library` (versioned by `node` where given), unless it is the shim's.
void* lookup_outside_shim(void* library, const char* name, const char* node);

}  // namespace nvrtc_cache::shim::interpose
