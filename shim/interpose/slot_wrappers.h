// Slot wrappers: for each slot (one real NVRTC library), a full set of NVRTC wrappers bound to it,
// which dlsym hands to clients that look NVRTC's functions up on a handle.
// Contract: the table is built at load time and read-only afterwards; thread-safe.
#pragma once

namespace nvrtc_cache::shim::interpose {

// The wrapper of function `name` bound to `slot`, or nullptr if the shim has no wrapper for it.
void* slot_wrapper(int slot, const char* name);

}  // namespace nvrtc_cache::shim::interpose
