// The proxy core's table for the stand-ins (shim/interpose/proxy_entries.h): each entry is a wrapper
// generated from the library's .def table, as the preloaded shim's exports are
// (libraries/nvjitlink/exports.cc, libraries/nvvm/exports.cc), whose real library is the one the proxy
// opened by absolute path (the registries' proxy mode, shim/interpose/library_registry.h).
#include "shim/interpose/proxy_entries.h"

#include <string_view>

#include "shim/interpose/export.h"
#include "shim/interpose/proxied_library.h"
#include "libraries/nvjitlink/real_nvjitlink.h"
#include "libraries/nvvm/real_nvvm.h"
#include "shim/interpose/wrapper_body.h"

// The per-major wrappers of libraries/nvrtc/exports.cc (nvrtcX@libnvrtc.so.12).
#define NVRTC_API(kind, ret, name, params, args) extern "C" ret nvrtc_cache_v12_##name params;
#include "libraries/nvrtc/api.def"
#undef NVRTC_API

namespace nvrtc_cache::shim::interpose {
namespace {

// The wrappers for the clients of one nvJitLink major: kNvJitLinkVersionNodes[kNode] (13, or 12 for
// the stand-in libnvJitLink.so.12, whose real library is a 12.x one).
template <int kNode>
struct NvJitLinkEntries {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                                                        \
  static ret name params NVRTC_CACHE_WRAPPER_BODY(kind, ret, name, args,                                         \
                                                  real_nvjitlink_for_caller(__builtin_return_address(0), kNode), \
                                                  kNvJitLinkVersionNodes[kNode])
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
};
static_assert(std::string_view(kNvJitLinkVersionNodes[0]) == "libnvJitLink.so.13" && kNvJitLink12Node == 1);

struct NvvmEntries {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                \
  static ret name params NVRTC_CACHE_WRAPPER_BODY(kind, ret, name, args, \
                                                  real_nvvm_for_caller(__builtin_return_address(0)), nullptr)
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API
};

void* real_function(ProxiedKind kind, const char* name) {
  try {
    switch (kind) {
      case ProxiedKind::kNvJitLink:
        return proxied_function(kProxiedNvJitLink, name);
      case ProxiedKind::kNvvm:
        return proxied_function(kProxiedNvvm, name);
      case ProxiedKind::kNvrtc12:
        return proxied_function(kProxiedNvrtc12, name);
      case ProxiedKind::kNvJitLink12:
        return proxied_function(kProxiedNvJitLink12, name);
    }
    return nullptr;
  } catch (...) {
    return nullptr;
  }
}

constexpr ProxyEntries make_entries() {
  ProxyEntries entries;
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) \
  entries.nvjitlink.name = &NvJitLinkEntries<0>::name;    \
  entries.nvjitlink12.name = &NvJitLinkEntries<kNvJitLink12Node>::name;
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) entries.nvvm.name = &NvvmEntries::name;
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API
#define NVRTC_API(kind, ret, name, params, args) entries.nvrtc12.name = &nvrtc_cache_v12_##name;
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
  entries.real_function = &real_function;
  return entries;
}

constexpr ProxyEntries kEntries = make_entries();

}  // namespace
}  // namespace nvrtc_cache::shim::interpose

NVRTC_CACHE_EXPORT const nvrtc_cache::shim::interpose::ProxyEntries* nvrtc_cache_proxy_entries() {
  return &nvrtc_cache::shim::interpose::kEntries;
}
