#include "shim/interpose/real_nvjitlink.h"

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "platform/errno_guard.h"
#include "shim/interpose/library_identity.h"
#include "shim/interpose/library_registry.h"
#include "shim/interpose/wrapper_body.h"

namespace nvrtc_cache::shim::interpose {
namespace {

constexpr std::string_view kPrivate = "__nvJitLinkAPI";

bool is_known_nvjitlink_function(const std::string& name) {
  return name == "nvJitLinkVersion" || name == kPrivate || !plain_nvjitlink_name(name.c_str()).empty();
}

struct NvJitLinkLibrary {
  using Real = RealNvJitLink;
  static constexpr const char* kProbe = "nvJitLinkVersion";
#ifdef NVRTC_CACHE_PROXY
  static constexpr const ProxiedLibrary& kProxied = kProxiedNvJitLink;
#endif
  static std::span<const char* const> nodes() { return kNvJitLinkVersionNodes; }
  static bool fill(Real& slot, void* library, const char* node) {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) \
  slot.name = reinterpret_cast<ret(*) params>(lookup_outside_shim(library, #name, node));
#include "shim/interpose/nvjitlink_api.def"
#undef HANDLE_LIBRARY_API
    void* version_fn = lookup_outside_shim(library, kProbe, node);
    unsigned major = 0, minor = 0;
    if (version_fn == nullptr ||
        reinterpret_cast<nvJitLinkResult (*)(unsigned*, unsigned*)>(version_fn)(&major, &minor) != NVJITLINK_SUCCESS) {
      return false;
    }
    slot.identity.major = static_cast<int>(major);
    slot.identity.minor = static_cast<int>(minor);
    slot.identity.build_id = build_id_of_object_containing(version_fn);
    for (const char* prefix : {"nvJitLink", "__nvJitLink"}) {
      for (const std::string& name : exported_function_names(static_cast<const link_map*>(slot.link_map), prefix)) {
        if (!is_known_nvjitlink_function(name)) slot.unknown_functions.push_back(name);
      }
    }
    return true;
  }
};

LibraryRegistry<NvJitLinkLibrary>& registry() {
  static auto* instance = new LibraryRegistry<NvJitLinkLibrary>();  // leaked: callable from exit handlers
  return *instance;
}

__attribute__((constructor)) void register_fork_locks() {
  platform::join_fork_order_of<&registry>(platform::ForkRank::kNvJitLinkSlots);
}

#define NVRTC_CACHE_SLOT_TABLE_DEF "shim/interpose/nvjitlink_api.def"
#define NVRTC_CACHE_SLOT_LIBRARY(slot) nvjitlink_slot_library(slot)
#include "shim/interpose/slot_table.inc"
#undef NVRTC_CACHE_SLOT_LIBRARY
#undef NVRTC_CACHE_SLOT_TABLE_DEF

}  // namespace

std::string plain_nvjitlink_name(const char* name) {
  if (name == nullptr) return {};
  std::string_view n = name;
  if (n.starts_with("__")) {
    bool suffixed = false;
    for (std::string_view suffix : kNvJitLinkReleaseSuffixes) {
      if (n.size() > 2 + suffix.size() && n.ends_with(suffix)) {
        n = n.substr(2, n.size() - 2 - suffix.size());
        suffixed = true;
        break;
      }
    }
    if (!suffixed) return {};
  }
#define HANDLE_LIBRARY_API(kind, ret, fn, params, args) \
  if (n == #fn) return #fn;
#include "shim/interpose/nvjitlink_api.def"
#undef HANDLE_LIBRARY_API
  return {};
}

const RealNvJitLink* real_nvjitlink_for_caller(const void* caller) {
  const platform::ErrnoGuard errno_guard;
  try {
    return registry().for_caller(caller);
  } catch (...) {
    return nullptr;
  }
}

int nvjitlink_slot_for_function(const void* function) {
  const platform::ErrnoGuard errno_guard;
  try {
    return registry().slot_for_function(function);
  } catch (...) {
    return -1;
  }
}

const RealNvJitLink* nvjitlink_slot_library(int slot) { return registry().slot_library(slot); }

void* nvjitlink_slot_wrapper(int slot, const char* name) {
  try {
    return wrapper_of(slot, plain_nvjitlink_name(name));
  } catch (...) {
    return nullptr;
  }
}

}  // namespace nvrtc_cache::shim::interpose
