#include "libraries/nvjitlink/real_nvjitlink.h"

#include <dlfcn.h>

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "libraries/nvjitlink/function_names.h"
#include "platform/errno_guard.h"
#include "shim/interpose/library_identity.h"
#include "shim/interpose/library_registry.h"
#include "shim/interpose/wrapper_body.h"

namespace nvrtc_cache::shim::interpose {
namespace {

constexpr const char* kVersionFunction = "nvJitLinkVersion";
// nvJitLinkVersion (12.3 on), else a name every 12.x exports (12.0 to 12.2 have no plain names).
constexpr const char* kProbes[] = {kVersionFunction, "__nvJitLinkCreate_12_0"};

// `name` as `library` exports it: its plain name (12.3 on), else its newest release-suffixed one.
void* lookup_function(void* library, const char* name, const char* node) {
  if (void* fn = lookup_outside_shim(library, name, node)) return fn;
  for (const NvJitLinkMajor& known : kNvJitLinkMajors) {
    for (auto suffix = known.suffixes.rbegin(); suffix != known.suffixes.rend(); ++suffix) {
      const std::string suffixed = std::string("__") + name + *suffix;
      if (void* fn = lookup_outside_shim(library, suffixed.c_str(), node)) return fn;
    }
  }
  return nullptr;
}

// The version node `library` defines ("libnvJitLink.so.12"), or nullptr.
const char* node_of(void* library) {
  for (const char* node : kNvJitLinkVersionNodes) {
    for (const char* probe : kProbes) {
      void* fn = dlvsym(library, probe, node);
      if (fn && !in_shim(fn)) return node;
    }
  }
  return nullptr;
}

struct NvJitLinkLibrary {
  using Real = RealNvJitLink;
  // The stand-in libnvJitLink.so.12 calls the per-major entries (ProxyEntries::nvjitlink12): a 12.x only.
  static const ProxiedLibrary& proxied(const char* only_node) {
    return only_node != nullptr && std::string_view(only_node) == kNvJitLinkVersionNodes[kNvJitLink12Node]
               ? kProxiedNvJitLink12
               : kProxiedNvJitLink;
  }
  static std::span<const char* const> probes() { return kProbes; }
  static std::span<const char* const> nodes() { return kNvJitLinkVersionNodes; }
  static bool fill(Real& slot, void* library, const char*) {
    const char* node = node_of(library);
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) \
  slot.name = reinterpret_cast<ret(*) params>(lookup_function(library, #name, node));
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
    if (slot.nvJitLinkCreate == nullptr) return false;
    slot.identity.build_id = build_id_of_object_containing(reinterpret_cast<const void*>(slot.nvJitLinkCreate));
    void* version_fn = lookup_outside_shim(library, kVersionFunction, node);
    unsigned major = 0, minor = 0;
    if (version_fn != nullptr &&
        reinterpret_cast<nvJitLinkResult (*)(unsigned*, unsigned*)>(version_fn)(&major, &minor) == NVJITLINK_SUCCESS) {
      slot.identity.major = static_cast<int>(major);
      slot.identity.minor = static_cast<int>(minor);
    } else if (node != nullptr && std::string_view(node) == kNvJitLinkVersionNodes[kNvJitLink12Node]) {
      slot.identity.major = 12;  // 12.0 to 12.2: its minor is not known
      slot.not_cacheable = "this nvJitLink 12 has no nvJitLinkVersion (12.0 to 12.2): its version is unknown";
    } else {
      return false;
    }
    for (const char* prefix : {"nvJitLink", "__nvJitLink"}) {
      for (const std::string& name : exported_function_names(static_cast<const link_map*>(slot.link_map), prefix)) {
        if (!is_known_nvjitlink_function(name, slot.identity.major)) slot.unknown_functions.push_back(name);
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

#define NVRTC_CACHE_SLOT_TABLE_DEF "libraries/nvjitlink/api.def"
#define NVRTC_CACHE_SLOT_LIBRARY(slot) nvjitlink_slot_library(slot)
#include "shim/interpose/slot_table.inc"
#undef NVRTC_CACHE_SLOT_LIBRARY
#undef NVRTC_CACHE_SLOT_TABLE_DEF

}  // namespace

const RealNvJitLink* real_nvjitlink_for_caller(const void* caller, int node_index) {
  const platform::ErrnoGuard errno_guard;
  try {
    return registry().for_caller(caller, node_index);
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
