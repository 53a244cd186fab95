#include "shim/interpose/real_nvrtc.h"

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
#include <string_view>
#include <unordered_map>
#include <vector>

#include "platform/errno_guard.h"
#include "platform/fork_locks.h"
#include "shim/interpose/library_identity.h"
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

struct Probe {
  void* version_fn = nullptr;
  const char* node = nullptr;
};

// `only_node`: the version node the caller's reference named (a per-major wrapper), or nullptr.
Probe find_real_version_fn(void* scope, const char* only_node) {
  for (const char* node : kVersionNodes) {
    if (only_node && std::strcmp(node, only_node) != 0) continue;
    void* fn = scope ? dlvsym(scope, "nvrtcVersion", node) : nullptr;
    if (fn && !in_shim(fn)) return {fn, node};
  }
  for (const char* node : kVersionNodes) {  // the caller's scope lacks it: anything loaded after us
    if (only_node && std::strcmp(node, only_node) != 0) continue;
    void* fn = dlvsym(RTLD_NEXT, "nvrtcVersion", node);
    if (fn && !in_shim(fn)) return {fn, node};
  }
  if (only_node) return {};
  void* fn = real_dlsym(RTLD_NEXT, "nvrtcVersion");
  if (fn && !in_shim(fn)) return {fn, nullptr};
  return {};
}

// Proxy mode: this library stands in for libnvrtc.so.13 (and, through the stand-in libnvrtc.so.12,
// which calls the per-major wrappers, for libnvrtc.so.12); the real one is opened by absolute path
// ($NVRTC_CACHE_REAL_NVRTC, else the run-time search's: shim/interpose/proxied_library.h), RTLD_LOCAL.
Probe proxied_library_version_fn(const char* only_node) {
  const bool twelve = only_node != nullptr && std::strcmp(only_node, kProxiedNvrtc12.node) == 0;
  void* library = open_proxied_library(twelve ? kProxiedNvrtc12 : kProxiedNvrtc);
  if (library == nullptr) return {};
  for (const char* node : kVersionNodes) {
    if (void* fn = dlvsym(library, "nvrtcVersion", node)) return {fn, node};
  }
  return {real_dlsym(library, "nvrtcVersion"), nullptr};
}

std::unique_ptr<RealNvrtc> make_slot(const Probe& probe) {
  const link_map* library_map = link_map_of(probe.version_fn);
  if (library_map == nullptr) return nullptr;
  void* library = dlopen(library_map->l_name, RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return nullptr;
  auto slot = std::make_unique<RealNvrtc>();
  slot->link_map = library_map;
#define NVRTC_API(kind, ret, name, params, args) \
  slot->name = reinterpret_cast<ret(*) params>(lookup_outside_shim(library, #name, probe.node));
#include "shim/interpose/nvrtc_api.def"
#undef NVRTC_API
  for (int i = 0; i < kPrivateNvrtcFunctionCount; ++i) {
    slot->private_functions[i] = lookup_outside_shim(library, kPrivateNvrtcFunctions[i], probe.node);
  }
  dlclose(library);  // NOLOAD handle: drops only the reference it took
  if (slot->nvrtcVersion == nullptr ||
      slot->nvrtcVersion(&slot->identity.major, &slot->identity.minor) != NVRTC_SUCCESS) {
    return nullptr;
  }
  slot->identity.build_id = interpose::build_id_of_object_containing(probe.version_fn);
  slot->unknown_functions = interpose::unknown_nvrtc_functions(library_map);
  return slot;
}

class SlotRegistry {
 public:
  const RealNvrtc* for_caller(const void* caller, int node_index) {
    // Call sites are user-space addresses (< 2^56): the node index goes in the top byte.
    const auto site = reinterpret_cast<std::uintptr_t>(caller) | (std::uintptr_t(node_index + 1) << 56);
    {
      std::shared_lock lock(mu_);
      if (auto it = by_call_site_.find(site); it != by_call_site_.end()) return it->second;
    }
    const RealNvrtc* slot = resolve(caller, node_index < 0 ? nullptr : kVersionNodes[node_index]);
    std::unique_lock lock(mu_);
    by_call_site_.emplace(site, slot);
    return slot;
  }

 private:
  const RealNvrtc* resolve(const void* caller, const char* only_node) {
    Probe probe;
    if (proxy_mode()) {
      probe = proxied_library_version_fn(only_node);
    } else {
      void* scope = scope_handle_of(link_map_of(caller));
      probe = find_real_version_fn(scope, only_node);
      if (scope) dlclose(scope);
    }
    if (probe.version_fn == nullptr) return nullptr;
    return adopt(probe, link_map_of(probe.version_fn));
  }

  // The slot of the library `probe` found, made if there is none yet. The dl* calls and NVRTC's
  // nvrtcVersion run with no lock held (fork() never waits for the loader); a slot made twice by
  // racing threads is dropped, not used.
  const RealNvrtc* adopt(const Probe& probe, const link_map* library_map) {
    {
      std::shared_lock lock(mu_);
      if (const RealNvrtc* existing = find_slot(library_map)) return existing;
    }
    auto made = make_slot(probe);
    if (!made) return nullptr;
    std::unique_lock lock(mu_);
    if (const RealNvrtc* existing = find_slot(library_map)) return existing;
    slots_.push_back(std::move(made));
    return slots_.back().get();
  }

  const RealNvrtc* find_slot(const link_map* library_map) const {  // under mu_
    for (const auto& slot : slots_) {
      if (slot->link_map == library_map) return slot.get();
    }
    return nullptr;
  }

  std::shared_mutex mu_;
  std::unordered_map<std::uintptr_t, const RealNvrtc*> by_call_site_;
  std::vector<std::unique_ptr<RealNvrtc>> slots_;

 public:
  // Slot indices for dlsym clients: the library of `function`, found or created.
  int slot_for_function(const void* function) {
    const link_map* library_map = link_map_of(function);
    if (library_map == nullptr || library_map == shim_link_map()) return -1;
    {
      std::shared_lock lock(mu_);
      for (int i = 0; i < kMaxSlots; ++i) {
        const RealNvrtc* slot = by_index_[static_cast<std::size_t>(i)].load(std::memory_order_acquire);
        if (slot && slot->link_map == library_map) return i;
      }
    }
    void* library = dlopen(library_map->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) return -1;
    Probe probe;
    probe.node = version_node_of(library);
    probe.version_fn = probe.node ? dlvsym(library, "nvrtcVersion", probe.node) : real_dlsym(library, "nvrtcVersion");
    dlclose(library);
    if (probe.version_fn == nullptr || in_shim(probe.version_fn) || link_map_of(probe.version_fn) != library_map) {
      return -1;  // the object only exports nvrtc* names; it is not NVRTC
    }
    const RealNvrtc* slot = adopt(probe, library_map);
    if (slot == nullptr) return -1;
    std::unique_lock lock(mu_);
    for (int i = 0; i < kMaxSlots; ++i) {
      auto& cell = by_index_[static_cast<std::size_t>(i)];
      if (cell.load() == slot) return i;
      if (cell.load() == nullptr) {
        cell.store(slot, std::memory_order_release);
        return i;
      }
    }
    return -1;
  }

  const RealNvrtc* slot_library(int slot) const {
    if (slot < 0 || slot >= kMaxSlots) return nullptr;
    return by_index_[static_cast<std::size_t>(slot)].load(std::memory_order_acquire);
  }

  // The fork handlers (platform/fork_locks.h).
  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child() { platform::renew_in_child(mu_); }

 private:
  std::array<std::atomic<const RealNvrtc*>, kMaxSlots> by_index_{};
};

SlotRegistry& registry() {
  static auto* instance = new SlotRegistry();  // leaked: callable from exit handlers
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
