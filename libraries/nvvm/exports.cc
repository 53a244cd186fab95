// The shim's exported libNVVM API, generated from libraries/nvvm/api.def: each wrapper finds the
// real libNVVM of its caller and hands over to hooks:: (libraries/nvvm/), in the version node
// libnvvm.so.4 (shim/interpose/exports.map; libNVVM's own symbols are unversioned, and an unversioned
// reference binds to a default version). Nothing thrown inside crosses this C boundary.
#include <nvvm.h>

#include "shim/interpose/export.h"
#include "libraries/nvvm/real_nvvm.h"
#include "shim/interpose/wrapper_body.h"

#define HANDLE_LIBRARY_API(kind, ret, name, params, args)      \
  NVRTC_CACHE_EXPORT ret name params NVRTC_CACHE_WRAPPER_BODY( \
      kind, ret, name, args, nvrtc_cache::shim::interpose::real_nvvm_for_caller(__builtin_return_address(0)), nullptr)
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API
