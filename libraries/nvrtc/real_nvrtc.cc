#include "libraries/nvrtc/real_nvrtc.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "platform/errno_guard.h"
#include "platform/fork_locks.h"
#include "shim/interpose/library_identity.h"
#include "shim/interpose/library_registry.h"
#include "shim/interpose/host_mode.h"
#include "shim/interpose/loaded_object.h"
#include "shim/interpose/proxied_library.h"
#include "shim/interpose/wrapper_body.h"

namespace nvrtc_cache::shim::interpose {
namespace {

// Version nodes of the NVRTC majors the shim knows, newest first. A versioned lookup (dlvsym) never
// matches the shim's own unversioned definitions, so it skips the shim and lands in a real NVRTC.
constexpr auto& kVersionNodes = kNvrtcVersionNodes;

const char* version_node_of(void* library) {
  for (const char* node : kVersionNodes) {
    void* fn = dlvsym(library, "nvrtcVersion", node);
    if (fn && !in_shim(fn)) return node;
  }
  return nullptr;
}

constexpr const char* kProbes[] = {"nvrtcVersion"};

// NVRTC as the one registry (shim/interpose/library_registry.h) describes a library.
struct NvrtcLibrary {
  using Real = RealNvrtc;
  // Proxy mode: this library stands in for libnvrtc.so.13 (and, through the stand-in libnvrtc.so.12,
  // which calls the per-major wrappers, for libnvrtc.so.12); the real one is opened by absolute path
  // ($NVRTC_CACHE_REAL_NVRTC, else the run-time search's: shim/interpose/proxied_library.h).
  static const ProxiedLibrary& proxied(const char* only_node) {
    return only_node != nullptr && std::strcmp(only_node, kProxiedNvrtc12.node) == 0 ? kProxiedNvrtc12 : kProxiedNvrtc;
  }
  static std::span<const char* const> probes() { return kProbes; }
  static std::span<const char* const> nodes() { return kVersionNodes; }
  static bool fill(Real& slot, void* library, const char*) {
    const char* node = version_node_of(library);
#define NVRTC_API(kind, ret, name, params, args) \
  slot.name = reinterpret_cast<ret(*) params>(lookup_outside_shim(library, #name, node));
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
    for (int i = 0; i < kPrivateNvrtcFunctionCount; ++i) {
      slot.private_functions[i] = lookup_outside_shim(library, kPrivateNvrtcFunctions[i], node);
    }
    if (slot.nvrtcVersion == nullptr ||
        slot.nvrtcVersion(&slot.identity.major, &slot.identity.minor) != NVRTC_SUCCESS) {
      return false;
    }
    slot.identity.build_id = build_id_of_object_containing(reinterpret_cast<const void*>(slot.nvrtcVersion));
    slot.unknown_functions = unknown_nvrtc_functions(static_cast<const link_map*>(slot.link_map));
    return true;
  }
};

LibraryRegistry<NvrtcLibrary>& registry() {
  static auto* instance = new LibraryRegistry<NvrtcLibrary>();  // leaked: callable from exit handlers
  return *instance;
}

__attribute__((constructor)) void register_fork_locks() {
  platform::join_fork_order_of<&registry>(platform::ForkRank::kSlotRegistry);
}

}  // namespace

int slot_for_function(const void* function) {
  const platform::ErrnoGuard errno_guard;
  int slot = -1;
  try {
    slot = registry().slot_for_function(function);
  } catch (...) {
    slot = -1;
  }
  return slot;
}

const RealNvrtc* slot_library(int slot) { return registry().slot_library(slot); }

bool address_in_shim(const void* address) { return in_shim(address); }

void function_missing_in_real_nvrtc(const char* name, const void* caller, const char* node) {
  // ld.so names the program by argv[0] and the referencing object by its path (the program's own
  // references by argv[0] too).
  const char* program = program_invocation_name != nullptr ? program_invocation_name : "<program name unknown>";
  const char* object = program;
  Dl_info info;
  if (caller != nullptr && dladdr(caller, &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0] != '\0') {
    const link_map* map = link_map_of(caller);
    if (map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') object = info.dli_fname;
  }
  for (const char* part : {program, ": symbol lookup error: ", object, ": undefined symbol: ", name,
                           node ? ", version " : "", node ? node : "", "\n"}) {
    for (std::size_t left = std::strlen(part); left > 0;) {
      const ssize_t n = ::write(STDERR_FILENO, part, left);
      if (n <= 0) break;
      part += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  ::_exit(127);
}

const RealNvrtc* real_nvrtc_for_caller(const void* caller, int node_index) {
  const platform::ErrnoGuard errno_guard;
  const RealNvrtc* slot = nullptr;
  try {
    slot = registry().for_caller(caller, node_index);
  } catch (...) {
    slot = nullptr;
  }
  return slot;
}

}  // namespace nvrtc_cache::shim::interpose
