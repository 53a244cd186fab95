// The shim's exported nvJitLink API, generated from libraries/nvjitlink/api.def: each wrapper
// finds the real nvJitLink of its caller and either forwards (PASS) or hands over to hooks:: (HOOK).
// nvJitLink 13's: under its plain name and under the release-suffixed names nvJitLink.h's inline
// functions call (__nvJitLinkCreate_13_0 to _13_5: what a program built against a 13.x header
// imports), all in the version node libnvJitLink.so.13 (shim/interpose/exports.map), the default one.
// nvJitLink 12's (every row but 13.1's LTO-IR getters, which 12.x does not have): under its plain name
// and __nvJitLinkCreate_12_0 to _12_9, as non-default versions in libnvJitLink.so.12, so that what a
// program or library linked against libnvJitLink.so.12 imports (nvJitLinkCreate@libnvJitLink.so.12,
// __nvJitLinkCreate_12_9@libnvJitLink.so.12) binds to them; they route only to a real nvJitLink 12.
// Nothing thrown inside crosses this C boundary.
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>

#include "shim/interpose/export.h"
#include "libraries/nvjitlink/real_nvjitlink.h"
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
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API

// `name`'s 12.x release-suffixed alias of the nvJitLink 12 wrapper, in libnvJitLink.so.12.
#define NVRTC_CACHE_V12_ALIAS(ret, name, params, suffix)              \
  NVRTC_CACHE_EXPORT_USED ret nvrtc_cache_v12___##name##suffix params \
      __attribute__((alias("nvrtc_cache_v12_" #name)));               \
  __asm__(".symver nvrtc_cache_v12___" #name #suffix ", __" #name #suffix "@libnvJitLink.so.12");
#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                                                      \
  NVRTC_CACHE_EXPORT_USED ret nvrtc_cache_v12_##name params NVRTC_CACHE_WRAPPER_BODY(                          \
      kind, ret, name, args,                                                                                   \
      nvrtc_cache::shim::interpose::real_nvjitlink_for_caller(__builtin_return_address(0),                     \
                                                              nvrtc_cache::shim::interpose::kNvJitLink12Node), \
      "libnvJitLink.so.12") __asm__(".symver nvrtc_cache_v12_" #name ", " #name "@libnvJitLink.so.12");        \
  NVRTC_CACHE_V12_ALIAS(ret, name, params, _12_0)                                                              \
  NVRTC_CACHE_V12_ALIAS(ret, name, params, _12_1)                                                              \
  NVRTC_CACHE_V12_ALIAS(ret, name, params, _12_2)                                                              \
  NVRTC_CACHE_V12_ALIAS(ret, name, params, _12_3)                                                              \
  NVRTC_CACHE_V12_ALIAS(ret, name, params, _12_4)                                                              \
  NVRTC_CACHE_V12_ALIAS(ret, name, params, _12_5)                                                              \
  NVRTC_CACHE_V12_ALIAS(ret, name, params, _12_6)                                                              \
  NVRTC_CACHE_V12_ALIAS(ret, name, params, _12_7)                                                              \
  NVRTC_CACHE_V12_ALIAS(ret, name, params, _12_8)                                                              \
  NVRTC_CACHE_V12_ALIAS(ret, name, params, _12_9)
#define NVJITLINK_API_SINCE_13_1(kind, ret, name, params, args)
#include "libraries/nvjitlink/api.def"
#undef NVJITLINK_API_SINCE_13_1
#undef HANDLE_LIBRARY_API
#undef NVRTC_CACHE_V12_ALIAS
