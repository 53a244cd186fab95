// The shim's exported nvJitLink API, generated from shim/interpose/nvjitlink_api.def: each wrapper
// finds the real nvJitLink of its caller and either forwards (PASS) or hands over to hooks:: (HOOK),
// under its plain name and under the release-suffixed names nvJitLink.h's inline functions call
// (__nvJitLinkCreate_13_0 to _13_5: what a program built against a 13.x header imports), all in the version
// node libnvJitLink.so.13 (shim/interpose/exports.map). Nothing thrown inside crosses this C boundary.
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>

#include "shim/interpose/export.h"
#include "shim/interpose/real_nvjitlink.h"
#include "shim/interpose/wrapper_body.h"

#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                                                          \
  NVRTC_CACHE_EXPORT ret name params NVRTC_CACHE_WRAPPER_BODY(                                                     \
      kind, ret, name, args, nvrtc_cache::shim::interpose::real_nvjitlink_for_caller(__builtin_return_address(0)), \
      "libnvJitLink.so.13") NVRTC_CACHE_EXPORT ret __##name##_13_0 params __attribute__((alias(#name)));           \
  NVRTC_CACHE_EXPORT ret __##name##_13_1 params __attribute__((alias(#name)));                                     \
  NVRTC_CACHE_EXPORT ret __##name##_13_2 params __attribute__((alias(#name)));                                     \
  NVRTC_CACHE_EXPORT ret __##name##_13_3 params __attribute__((alias(#name)));                                     \
  NVRTC_CACHE_EXPORT ret __##name##_13_4 params __attribute__((alias(#name)));                                     \
  NVRTC_CACHE_EXPORT ret __##name##_13_5 params __attribute__((alias(#name)));
#include "shim/interpose/nvjitlink_api.def"
#undef HANDLE_LIBRARY_API
