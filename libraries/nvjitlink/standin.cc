// The stand-in libnvJitLink.so.13 (proxy mode), and, built with NVRTC_CACHE_NVJITLINK_MAJOR=12, the
// stand-in libnvJitLink.so.12: nvJitLink's every function, in that major's version node
// (nvjitlink<major>_standin.map), as the 13.5 (12.9) library exports them: each row of
// libraries/nvjitlink/api.def under its plain name and its release-suffixed names
// (__nvJitLinkCreate_13_0 to _13_5; _12_0 to _12_9), forwarded to the proxy core's hooks
// (standin_core.h; for 12, the per-major ones, which reach a 12.x nvJitLink only), each found by dlsym
// only where the real nvJitLink has it; nvJitLinkVersion and the private __nvJitLinkAPI forwarded
// untouched to the real nvJitLink the core opened.
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>

#include "shim/interpose/export.h"
#include "shim/interpose/standin/standin_core.h"

namespace {

using nvrtc_cache::shim::interpose::ProxiedKind;
// Each function's release-suffixed names of `major` from _0 to _5 (and, for 12, to _9).
#define NVRTC_CACHE_NVJITLINK_RELEASES_0_TO_5(ret, name, params, major) \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, __##name##_##major##_0, params) \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, __##name##_##major##_1, params) \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, __##name##_##major##_2, params) \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, __##name##_##major##_3, params) \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, __##name##_##major##_4, params) \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, __##name##_##major##_5, params)
#if NVRTC_CACHE_NVJITLINK_MAJOR == 12
constexpr const char* kWhat = "libnvJitLink.so.12";
constexpr ProxiedKind kKind = ProxiedKind::kNvJitLink12;
#define NVRTC_CACHE_NVJITLINK_TABLE nvjitlink12
#define NVRTC_CACHE_NVJITLINK_SUFFIXES(ret, name, params)        \
  NVRTC_CACHE_NVJITLINK_RELEASES_0_TO_5(ret, name, params, 12)   \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, __##name##_12_6, params) \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, __##name##_12_7, params) \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, __##name##_12_8, params) \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, __##name##_12_9, params)
#else
constexpr const char* kWhat = "libnvJitLink.so.13";
constexpr ProxiedKind kKind = ProxiedKind::kNvJitLink;
#define NVRTC_CACHE_NVJITLINK_TABLE nvjitlink
#define NVRTC_CACHE_NVJITLINK_SUFFIXES(ret, name, params) NVRTC_CACHE_NVJITLINK_RELEASES_0_TO_5(ret, name, params, 13)
#endif

static_assert(NVJITLINK_ERROR_INTERNAL == 6, "the private forwarder's failure code below");
constexpr const char* kPassed[] = {"nvJitLinkVersion", "__nvJitLinkAPI"};
constexpr int kPassedCount = 2;

}  // namespace

extern "C" {
__attribute__((visibility("hidden"), used)) void* nvrtc_cache_standin_nvjitlink_passed[kPassedCount] = {};
}

namespace {

__attribute__((constructor)) void load_at_start() {
  nvrtc_cache::shim::standin::resolve_real_functions(kWhat, kKind, kPassed, nvrtc_cache_standin_nvjitlink_passed,
                                                     kPassedCount);
}

void* passed(int which) { return __atomic_load_n(&nvrtc_cache_standin_nvjitlink_passed[which], __ATOMIC_ACQUIRE); }

}  // namespace

// Each name is an indirect function answering as the real nvJitLink would (standin_core.h).
#define NVRTC_CACHE_NVJITLINK_NAME(ret, name, exported, params) \
  NVRTC_CACHE_STANDIN_NAME(kWhat, kKind, "nvJitLinkVersion", ret, name, exported, params)
#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                                       \
  static ret standin_##name params {                                                            \
    const auto* entries = nvrtc_cache::shim::standin::core_entries(kWhat);                      \
    return entries ? entries->NVRTC_CACHE_NVJITLINK_TABLE.name args : NVJITLINK_ERROR_INTERNAL; \
  }                                                                                             \
  NVRTC_CACHE_NVJITLINK_NAME(ret, name, name, params)                                           \
  NVRTC_CACHE_NVJITLINK_SUFFIXES(ret, name, params)
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
#undef NVRTC_CACHE_NVJITLINK_NAME

NVRTC_CACHE_EXPORT nvJitLinkResult nvJitLinkVersion(unsigned int* major, unsigned int* minor) {
  auto* real = reinterpret_cast<nvJitLinkResult (*)(unsigned int*, unsigned int*)>(passed(0));
  return real ? real(major, minor) : NVJITLINK_ERROR_INTERNAL;
}

NVRTC_CACHE_STANDIN_JUMP(__nvJitLinkAPI, nvrtc_cache_standin_nvjitlink_passed, 8, 6)
