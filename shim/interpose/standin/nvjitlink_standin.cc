// The stand-in libnvJitLink.so.13 (proxy mode): nvJitLink's every function, in nvJitLink's version node
// (nvjitlink_standin.map), as the 13.5 library exports them: each row of shim/interpose/nvjitlink_api.def
// under its plain name and its release-suffixed names (__nvJitLinkCreate_13_0 to _13_5), forwarded to
// the proxy core's hooks (standin_core.h), each found by dlsym only where the real nvJitLink has it;
// nvJitLinkVersion and the private __nvJitLinkAPI forwarded untouched to the real nvJitLink the core
// opened.
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>

#include "shim/interpose/export.h"
#include "shim/interpose/standin/standin_core.h"

namespace {

using nvrtc_cache::shim::interpose::ProxiedKind;
constexpr const char* kWhat = "libnvJitLink.so.13";

static_assert(NVJITLINK_ERROR_INTERNAL == 6, "the private forwarder's failure code below");
constexpr const char* kPassed[] = {"nvJitLinkVersion", "__nvJitLinkAPI"};
constexpr int kPassedCount = 2;

}  // namespace

extern "C" {
__attribute__((visibility("hidden"), used)) void* nvrtc_cache_standin_nvjitlink_passed[kPassedCount] = {};
}

namespace {

__attribute__((constructor)) void load_at_start() {
  nvrtc_cache::shim::standin::resolve_real_functions(kWhat, ProxiedKind::kNvJitLink, kPassed,
                                                     nvrtc_cache_standin_nvjitlink_passed, kPassedCount);
}

void* passed(int which) { return __atomic_load_n(&nvrtc_cache_standin_nvjitlink_passed[which], __ATOMIC_ACQUIRE); }

}  // namespace

// Each name is a GNU indirect function whose resolver answers as the real nvJitLink would: to a
// dlsym or dlvsym, the wrapper where the real library has that very name, NULL where it does not (a
// client probing a 13.0 nvJitLink for nvJitLinkGetLinkedLTOIR or a _13_1 suffix finds none), the
// wrapper for every name when no real nvJitLink can be loaded (standin_core.h); to the
// dynamic loader (a linked client's relocations, lazy binding), always the wrapper, which answers a
// call to a function the real library lacks as the loader would have (exit status 127).
#define NVRTC_CACHE_STANDIN_NAME(ret, name, exported, params)                                                     \
  extern "C" __attribute__((used)) auto nvrtc_cache_resolve_##exported()->ret(*) params {                         \
    if (nvrtc_cache::shim::standin::resolving_for_the_loader(__builtin_return_address(0))) {                      \
      return &standin_##name;                                                                                     \
    }                                                                                                             \
    return nvrtc_cache::shim::standin::dlsym_finds(kWhat, ProxiedKind::kNvJitLink, #exported, "nvJitLinkVersion") \
               ? &standin_##name                                                                                  \
               : nullptr;                                                                                         \
  }                                                                                                               \
  NVRTC_CACHE_EXPORT ret exported params __attribute__((ifunc("nvrtc_cache_resolve_" #exported)));
#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                     \
  static ret standin_##name params {                                          \
    const auto* entries = nvrtc_cache::shim::standin::core_entries(kWhat);    \
    return entries ? entries->nvjitlink.name args : NVJITLINK_ERROR_INTERNAL; \
  }                                                                           \
  NVRTC_CACHE_STANDIN_NAME(ret, name, name, params)                           \
  NVRTC_CACHE_STANDIN_NAME(ret, name, __##name##_13_0, params)                \
  NVRTC_CACHE_STANDIN_NAME(ret, name, __##name##_13_1, params)                \
  NVRTC_CACHE_STANDIN_NAME(ret, name, __##name##_13_2, params)                \
  NVRTC_CACHE_STANDIN_NAME(ret, name, __##name##_13_3, params)                \
  NVRTC_CACHE_STANDIN_NAME(ret, name, __##name##_13_4, params)                \
  NVRTC_CACHE_STANDIN_NAME(ret, name, __##name##_13_5, params)
#include "shim/interpose/nvjitlink_api.def"
#undef HANDLE_LIBRARY_API
#undef NVRTC_CACHE_STANDIN_NAME

NVRTC_CACHE_EXPORT nvJitLinkResult nvJitLinkVersion(unsigned int* major, unsigned int* minor) {
  auto* real = reinterpret_cast<nvJitLinkResult (*)(unsigned int*, unsigned int*)>(passed(0));
  return real ? real(major, minor) : NVJITLINK_ERROR_INTERNAL;
}

NVRTC_CACHE_STANDIN_JUMP(__nvJitLinkAPI, nvrtc_cache_standin_nvjitlink_passed, 8, 6)
