// A link-time stand-in for nvJitLink 12.9's libnvJitLink.so.12 (soname and version node as the real
// one's, nvjitlink12_stub.map), so that link_client_nvjitlink12 can be linked without the wheel: its
// names only, each returning NVJITLINK_ERROR_INTERNAL. Never loaded: at run time the client finds the
// real libnvJitLink.so.12 on LD_LIBRARY_PATH (the client has no RUNPATH).
#define NVRTC_CACHE_STUB(name) \
  extern "C" __attribute__((visibility("default"))) int name() { return 6; }
#define NVRTC_CACHE_STUB_RELEASES(name) \
  NVRTC_CACHE_STUB(name)                \
  NVRTC_CACHE_STUB(__##name##_12_0)     \
  NVRTC_CACHE_STUB(__##name##_12_9)
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) NVRTC_CACHE_STUB_RELEASES(name)
#define NVJITLINK_API_SINCE_13_1(kind, ret, name, params, args)
#include "libraries/nvjitlink/api.def"
#undef NVJITLINK_API_SINCE_13_1
#undef HANDLE_LIBRARY_API
NVRTC_CACHE_STUB(nvJitLinkVersion)
