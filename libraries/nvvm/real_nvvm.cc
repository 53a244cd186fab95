#include "libraries/nvvm/real_nvvm.h"

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "platform/errno_guard.h"
#include "libraries/nvvm/function_names.h"
#include "shim/interpose/library_identity.h"
#include "shim/interpose/library_registry.h"
#include "shim/interpose/wrapper_body.h"

namespace nvrtc_cache::shim::interpose {
namespace {

constexpr const char* kProbes[] = {"nvvmVersion"};

struct NvvmLibrary {
  using Real = RealNvvm;
  static constexpr const char* kProbe = kProbes[0];
  static const ProxiedLibrary& proxied(const char*) { return kProxiedNvvm; }
  static std::span<const char* const> probes() { return kProbes; }
  static std::span<const char* const> nodes() { return {}; }  // libNVVM has no version nodes
  static bool fill(Real& slot, void* library, const char* node) {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) \
  slot.name = reinterpret_cast<ret(*) params>(lookup_outside_shim(library, #name, node));
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API
    void* version_fn = lookup_outside_shim(library, kProbe, node);
    void* ir_version_fn = lookup_outside_shim(library, "nvvmIRVersion", node);
    int major = 0, minor = 0, dbg_major = 0, dbg_minor = 0;
    if (version_fn == nullptr ||
        reinterpret_cast<nvvmResult (*)(int*, int*)>(version_fn)(&major, &minor) != NVVM_SUCCESS) {
      return false;
    }
    if (ir_version_fn != nullptr) {
      (void)reinterpret_cast<nvvmResult (*)(int*, int*, int*, int*)>(ir_version_fn)(&slot.ir_major, &slot.ir_minor,
                                                                                    &dbg_major, &dbg_minor);
    }
    slot.identity.major = major;
    slot.identity.minor = minor;
    slot.identity.build_id = build_id_of_object_containing(version_fn);
    for (const char* prefix : {"nvvm", "__nvvm"}) {
      for (const std::string& name : exported_function_names(static_cast<const link_map*>(slot.link_map), prefix)) {
        if (!is_known_nvvm_function(name)) slot.unknown_functions.push_back(name);
      }
    }
    return true;
  }
};

LibraryRegistry<NvvmLibrary>& registry() {
  static auto* instance = new LibraryRegistry<NvvmLibrary>();  // leaked: callable from exit handlers
  return *instance;
}

__attribute__((constructor)) void register_fork_locks() {
  platform::join_fork_order_of<&registry>(platform::ForkRank::kNvvmSlots);
}

#define NVRTC_CACHE_SLOT_TABLE_DEF "libraries/nvvm/api.def"
#define NVRTC_CACHE_SLOT_LIBRARY(slot) nvvm_slot_library(slot)
#include "shim/interpose/slot_table.inc"
#undef NVRTC_CACHE_SLOT_LIBRARY
#undef NVRTC_CACHE_SLOT_TABLE_DEF

}  // namespace

const RealNvvm* real_nvvm_for_caller(const void* caller) {
  const platform::ErrnoGuard errno_guard;
  try {
    return registry().for_caller(caller);
  } catch (...) {
    return nullptr;
  }
}

int nvvm_slot_for_function(const void* function) {
  const platform::ErrnoGuard errno_guard;
  try {
    return registry().slot_for_function(function);
  } catch (...) {
    return -1;
  }
}

const RealNvvm* nvvm_slot_library(int slot) { return registry().slot_library(slot); }

void* nvvm_slot_wrapper(int slot, const char* name) {
  try {
    return name ? wrapper_of(slot, name) : nullptr;
  } catch (...) {
    return nullptr;
  }
}

}  // namespace nvrtc_cache::shim::interpose
