// RealNvvm: the functions of one real libNVVM loaded in this process (a "slot"), found through the
// scope of the code that called the shim (shim/interpose/library_registry.h), so each caller reaches
// the library it loaded; and the slots handed to dlsym clients.
// Contract: thread-safe; slots are made once per real library and never freed; never throws. Fork:
// the registry's lock is platform::ForkRank::kNvvmSlots; no dl* or libNVVM call is made while it is held.
#pragma once

#include <nvvm.h>

#include <string>
#include <vector>

#include "keying/program_inputs.h"

namespace nvrtc_cache::shim::interpose {

struct RealNvvm {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API
  const void* link_map = nullptr;
  keying::LibraryIdentity identity;  // nvvmVersion and the build-id
  int ir_major = 0, ir_minor = 0;    // nvvmIRVersion (keyed through identity.build_id's library)
  // The nvvm* / __nvvm* functions this library exports that the shim does not know (a newer libNVVM's):
  // while any is there, no compile of this library is cached or served.
  std::vector<std::string> unknown_functions;
};

const RealNvvm* real_nvvm_for_caller(const void* caller);
int nvvm_slot_for_function(const void* function);
const RealNvvm* nvvm_slot_library(int slot);
void* nvvm_slot_wrapper(int slot, const char* name);

}  // namespace nvrtc_cache::shim::interpose
