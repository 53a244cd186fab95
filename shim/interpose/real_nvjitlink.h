// RealNvJitLink: the functions of one real nvJitLink library loaded in this process (a "slot"),
// found through the scope of the code that called the shim (as RealNvrtc is: shim/interpose/real_nvrtc.h),
// so each caller reaches the library it loaded; and the slots handed to dlsym clients.
// Contract: thread-safe; slots are made once per real library and never freed; resolution
// allocates only on the first call from a given call site; never throws. Fork: the registry's lock
// is platform::ForkRank::kNvJitLinkSlots (shim/interpose/library_registry.h); no dl* or nvJitLink call is
// made while it is held.
#pragma once

#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>

#include <string>
#include <vector>

#include "keying/program_inputs.h"

namespace nvrtc_cache::shim::interpose {

// nvJitLink's version nodes this build knows, newest first.
inline constexpr const char* kNvJitLinkVersionNodes[] = {"libnvJitLink.so.13"};
// The suffixes nvJitLink.h's inline functions add to the names they call, one per release (13.0 to
// 13.5; the 13.5 library exports every one of them). A library exporting another is not cached.
inline constexpr const char* kNvJitLinkReleaseSuffixes[] = {"_13_0", "_13_1", "_13_2", "_13_3", "_13_4", "_13_5"};

struct RealNvJitLink {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#include "shim/interpose/nvjitlink_api.def"
#undef HANDLE_LIBRARY_API
  const void* link_map = nullptr;
  keying::LibraryIdentity identity;
  // The nvJitLink* / __nvJitLink* functions this library exports that the table does not know (a newer
  // nvJitLink's, and release-suffixed names of another release): while any is there, no link of this
  // library is cached or served.
  std::vector<std::string> unknown_functions;
};

// The real nvJitLink reachable from `caller` (a return address inside the calling object), or
// nullptr when none is loaded there.
const RealNvJitLink* real_nvjitlink_for_caller(const void* caller);

// The slot of the nvJitLink library containing `function` (making it), or -1; its library.
int nvjitlink_slot_for_function(const void* function);
const RealNvJitLink* nvjitlink_slot_library(int slot);
// The wrapper bound to `slot` for `name` (a plain or release-suffixed nvJitLink name), or nullptr.
void* nvjitlink_slot_wrapper(int slot, const char* name);

// "nvJitLinkCreate" for "nvJitLinkCreate" and "__nvJitLinkCreate_13_0"; "" for any other name.
std::string plain_nvjitlink_name(const char* name);

}  // namespace nvrtc_cache::shim::interpose
