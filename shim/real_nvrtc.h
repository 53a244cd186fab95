// RealNvrtc: the functions of one real NVRTC library loaded in this process (a "slot"), found
// through the scope of the code that called the shim, so each caller reaches the library it loaded.
// Contract: thread-safe; slots are created once per real library and never freed (the shim is
// -z nodelete and NVRTC is never unloaded under a live caller); resolution allocates only on the
// first call from a given call site; never throws.
#pragma once

#include <nvrtc.h>

#include <cstddef>

#include "keying/program_inputs.h"

namespace nvrtc_cache::shim {

struct RealNvrtc {
#define NVRTC_API(kind, ret, name, params, args) ret(*name) params = nullptr;
#include "shim/nvrtc_api.def"
#undef NVRTC_API
  void* cpex = nullptr;  // __nvrtcCPEx, signature unknown: only ever jumped to
  const void* link_map = nullptr;
  keying::LibraryIdentity identity;
};

// The real NVRTC reachable from `caller` (a return address inside the calling object), or nullptr
// when none is loaded there.
const RealNvrtc* real_nvrtc_for_caller(const void* caller);

}  // namespace nvrtc_cache::shim
