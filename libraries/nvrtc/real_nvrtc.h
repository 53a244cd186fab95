// RealNvrtc: the functions of one real NVRTC library loaded in this process (a "slot"), found
// through the scope of the code that called the shim, so each caller reaches the library it loaded
// (NVRTC's instance of the one registry, shim/interpose/library_registry.h).
// Contract: thread-safe; slots are created once per real library and never freed (the shim is
// -z nodelete and NVRTC is never unloaded under a live caller); resolution allocates only on the
// first call from a given call site; never throws. Fork: the tables' lock is
// platform::ForkRank::kSlotRegistry; no dl* or NVRTC call is made while it is held.
#pragma once

#include <nvrtc.h>

#include <cstddef>
#include <string>
#include <vector>

#include "keying/program_inputs.h"

namespace nvrtc_cache::shim::interpose {

// NVRTC's private entry points (undocumented signatures), forwarded untouched by the trampolines of
// shim/interpose/arch/<architecture>/private_forwarders.S; the index is the trampoline's `which`.
inline constexpr const char* kPrivateNvrtcFunctions[] = {"__nvrtcCPEx", "__nvrtcNvvmHandle"};
inline constexpr int kPrivateNvrtcFunctionCount = 2;

struct RealNvrtc {
#define NVRTC_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
  void* private_functions[kPrivateNvrtcFunctionCount] = {};  // only ever jumped to
  const void* link_map = nullptr;
  keying::LibraryIdentity identity;
  // The nvrtc* / __nvrtc* functions this library exports that the table (nvrtc_api.def and
  // kPrivateNvrtcFunctions) does not know: a newer NVRTC's. While any is there, no compile of this
  // library is cached or served (a function the shim does not know could observe a served program).
  std::vector<std::string> unknown_functions;
};

// The real NVRTC reachable from `caller` (a return address inside the calling object), or nullptr
// when none is loaded there. `node_index` restricts it to one major's version node (an index into
// kNvrtcVersionNodes: a wrapper the caller reached through e.g. nvrtcX@libnvrtc.so.12); -1: any,
// newest first.
inline constexpr const char* kNvrtcVersionNodes[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};
const RealNvrtc* real_nvrtc_for_caller(const void* caller, int node_index = -1);

// Slots: each real NVRTC library a client reached through dlsym gets a slot index, and the shim
// hands that client wrappers bound to the slot (shim/interpose/slot_wrappers.cc), so two libraries (two
// NVRTC majors, two copies at different paths, RTLD_LOCAL loads) are routed apart.
inline constexpr int kMaxSlots = 8;
// The slot of the NVRTC library containing `function` (creating it), or -1 if that object is not
// an NVRTC library or no slot is free.
int slot_for_function(const void* function);
const RealNvrtc* slot_library(int slot);

// glibc's dlsym, bypassing the shim's own (shim/interpose/dlsym_hook.cc). The shim never calls the hooked one.
void* real_dlsym(void* handle, const char* name);
// True if `address` lies inside the shim itself.
bool address_in_shim(const void* address);

}  // namespace nvrtc_cache::shim::interpose
