// RealNvJitLink: the functions of one real nvJitLink library loaded in this process (a "slot"),
// found through the scope of the code that called the shim (as RealNvrtc is: libraries/nvrtc/real_nvrtc.h),
// so each caller reaches the library it loaded; and the slots handed to dlsym clients.
// Contract: thread-safe; slots are made once per real library and never freed; resolution
// allocates only on the first call from a given call site; never throws. Fork: the registry's lock
// is platform::ForkRank::kNvJitLinkSlots (shim/interpose/library_registry.h); no dl* or nvJitLink call is
// made while it is held.
#pragma once

#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>

#include <span>
#include <string>
#include <vector>

#include "keying/program_inputs.h"

namespace nvrtc_cache::shim::interpose {

// The suffixes nvJitLink.h's inline functions add to the names they call, one per release, oldest
// first: a library exports those of its own release and of every earlier one of its major (12.9 has
// _12_0 to _12_9; 13.5 has _13_0 to _13_5). 12.0 to 12.2 export only these, 12.3 on the plain names too.
inline constexpr const char* kNvJitLink12Suffixes[] = {"_12_0", "_12_1", "_12_2", "_12_3", "_12_4",
                                                       "_12_5", "_12_6", "_12_7", "_12_8", "_12_9"};
inline constexpr const char* kNvJitLink13Suffixes[] = {"_13_0", "_13_1", "_13_2", "_13_3", "_13_4", "_13_5"};

// One major of nvJitLink this build knows: its version node (every symbol of the library is in it)
// and its release suffixes. A library exporting a suffix of another release is not cached.
struct NvJitLinkMajor {
  int major;
  const char* node;
  std::span<const char* const> suffixes;
};
inline constexpr NvJitLinkMajor kNvJitLinkMajors[] = {{13, "libnvJitLink.so.13", kNvJitLink13Suffixes},
                                                      {12, "libnvJitLink.so.12", kNvJitLink12Suffixes}};
// Their version nodes, newest first (kNvJitLinkMajors' order).
inline constexpr const char* kNvJitLinkVersionNodes[] = {"libnvJitLink.so.13", "libnvJitLink.so.12"};
inline constexpr int kNvJitLink12Node = 1;  // the index of "libnvJitLink.so.12" above

struct RealNvJitLink {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
  const void* link_map = nullptr;
  keying::LibraryIdentity identity;
  // The nvJitLink* / __nvJitLink* functions this library exports that the table does not know for its
  // major (a newer nvJitLink's, release-suffixed names of another major or release, 13.1's LTO-IR
  // getters in a 12.x): while any is there, no link of this library is cached or served.
  std::vector<std::string> unknown_functions;
  // Why no link of this library is cached although its functions are known ("" when they are): 12.0
  // to 12.2 have no nvJitLinkVersion, so their version is unknown.
  std::string not_cacheable;
};

// The real nvJitLink reachable from `caller` (a return address inside the calling object), or
// nullptr when none is loaded there. `node_index` restricts it to one major's version node (an index
// into kNvJitLinkVersionNodes: the per-major exports of libnvJitLink.so.12), -1 to any.
const RealNvJitLink* real_nvjitlink_for_caller(const void* caller, int node_index = -1);

// The slot of the nvJitLink library containing `function` (making it), or -1; its library.
int nvjitlink_slot_for_function(const void* function);
const RealNvJitLink* nvjitlink_slot_library(int slot);
// The wrapper bound to `slot` for `name` (a plain or release-suffixed nvJitLink name), or nullptr.
void* nvjitlink_slot_wrapper(int slot, const char* name);

}  // namespace nvrtc_cache::shim::interpose
