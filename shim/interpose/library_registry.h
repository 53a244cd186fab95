// LibraryRegistry: the one registry of the real libraries of one kind (NVRTC, nvJitLink, libNVVM)
// loaded in this process, each a slot of its function table (Lib::Real), found through the scope of
// the code that called the shim so each caller reaches the library it loaded, and the slot indices
// handed to dlsym clients. `Lib` describes the kind:
//   using Real;                              the function table (with link_map, identity, unknown_functions)
//   static std::span<const char* const> probes();  functions one of which every such library exports,
//                                             tried in order ("nvJitLinkVersion", then what 12.0 has)
//   static std::span<const char* const> nodes();  its version nodes, newest first (may be empty)
//   static bool fill(Real&, void* library, const char* node);  looks the table's functions up (under the
//                                             node the library defines); reads the identity
//   static const ProxiedLibrary& proxied(const char* only_node);  in proxy mode: the real library, by
//                                   absolute path, for the callers of that version node (nullptr: any)
// In proxy mode (interpose/host_mode.h) every caller reaches the real library proxied() names for its node.
// Contract: thread-safe; slots are made once per real library and never freed; resolution allocates
// only on the first call from a given call site; no dl* or library call is made while the registry's
// lock (the fork rank given to register_fork_order) is held; never throws out of its public functions.
#pragma once

#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstring>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "platform/fork_locks.h"
#include "shim/interpose/host_mode.h"
#include "shim/interpose/loaded_object.h"
#include "shim/interpose/proxied_library.h"
#include "libraries/nvrtc/real_nvrtc.h"

namespace nvrtc_cache::shim::interpose {

template <typename Lib>
class LibraryRegistry {
 public:
  using Real = typename Lib::Real;

  // `node_index`: an index into Lib::nodes() the caller's reference named (a per-major export), or -1.
  const Real* for_caller(const void* caller, int node_index = -1) {
    // Call sites are user-space addresses (< 2^56): the node index goes in the top byte.
    const auto site = reinterpret_cast<std::uintptr_t>(caller) | (std::uintptr_t(node_index + 1) << 56);
    {
      std::shared_lock lock(mu_);
      if (auto it = by_call_site_.find(site); it != by_call_site_.end()) return it->second;
    }
    void* probe = find_probe(caller, node_index < 0 ? nullptr : Lib::nodes()[static_cast<std::size_t>(node_index)]);
    const Real* slot = probe ? adopt(probe) : nullptr;
    std::unique_lock lock(mu_);
    by_call_site_.emplace(site, slot);
    return slot;
  }

  // The slot of the library containing `function` (making it), or -1 if that object is not one.
  int slot_for_function(const void* function) {
    const link_map* library_map = link_map_of(function);
    if (library_map == nullptr || library_map == shim_link_map()) return -1;
    {
      std::shared_lock lock(mu_);
      for (int i = 0; i < kMaxSlots; ++i) {
        const Real* slot = by_index_[static_cast<std::size_t>(i)].load(std::memory_order_acquire);
        if (slot && slot->link_map == library_map) return i;
      }
    }
    void* library = dlopen(library_map->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) return -1;
    void* probe = nullptr;
    for (const char* name : Lib::probes()) {
      if (probe == nullptr) probe = lookup_outside_shim(library, name, first_node());
    }
    dlclose(library);
    if (probe == nullptr || link_map_of(probe) != library_map) return -1;
    const Real* slot = adopt(probe);
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

  const Real* slot_library(int slot) const {
    if (slot < 0 || slot >= kMaxSlots) return nullptr;
    return by_index_[static_cast<std::size_t>(slot)].load(std::memory_order_acquire);
  }

  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child() { platform::renew_in_child(mu_); }

 private:
  static const char* first_node() { return Lib::nodes().empty() ? nullptr : Lib::nodes()[0]; }

  static void* find_probe(const void* caller, const char* only_node) {
    return proxy_mode() ? find_proxied_probe(only_node) : find_probe_in_scope(caller, only_node);
  }

  // Proxy mode: the probe function of the real library, opened by absolute path.
  static void* find_proxied_probe(const char* only_node) {
    void* library = open_proxied_library(Lib::proxied(only_node));
    if (library == nullptr) return nullptr;
    void* found = nullptr;
    for (const char* probe : Lib::probes()) {
      for (const char* node : Lib::nodes()) {
        if (found == nullptr) found = dlvsym(library, probe, node);
      }
      if (found == nullptr) found = real_dlsym(library, probe);
    }
    return found && !in_shim(found) ? found : nullptr;
  }

  // Preload mode: the probe function of the library the caller's scope (or, failing that, anything
  // loaded after the shim) reaches; with `only_node` (the version node a per-major export names),
  // only a library defining that node. A versioned lookup never matches the shim's unversioned
  // definitions.
  static void* find_probe_in_scope(const void* caller, const char* only_node) {
    void* scope = scope_handle_of(link_map_of(caller));
    void* found = nullptr;
    for (const char* probe : Lib::probes()) {
      for (const char* node : Lib::nodes()) {
        if (only_node && std::strcmp(node, only_node) != 0) continue;
        if (found == nullptr && scope) found = dlvsym(scope, probe, node);
        if (found && in_shim(found)) found = nullptr;
      }
      if (found == nullptr && scope && only_node == nullptr) found = lookup_outside_shim(scope, probe, nullptr);
    }
    if (scope) dlclose(scope);
    for (const char* probe : Lib::probes()) {
      for (const char* node : Lib::nodes()) {
        if (only_node && std::strcmp(node, only_node) != 0) continue;
        if (found == nullptr) found = dlvsym(RTLD_NEXT, probe, node);
      }
      if (found == nullptr && only_node == nullptr) found = real_dlsym(RTLD_NEXT, probe);
    }
    return found && !in_shim(found) ? found : nullptr;
  }

  static std::unique_ptr<Real> make_slot(void* probe) {
    const link_map* library_map = link_map_of(probe);
    if (library_map == nullptr) return nullptr;
    void* library = dlopen(library_map->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) return nullptr;
    auto slot = std::make_unique<Real>();
    slot->link_map = library_map;
    const bool filled = Lib::fill(*slot, library, first_node());
    dlclose(library);  // NOLOAD handle: drops only the reference it took
    return filled ? std::move(slot) : nullptr;
  }

  // Made with no lock held (fork() never waits for the loader); one made twice by racing threads is dropped.
  const Real* adopt(void* probe) {
    const link_map* library_map = link_map_of(probe);
    {
      std::shared_lock lock(mu_);
      if (const Real* existing = find_slot(library_map)) return existing;
    }
    auto made = make_slot(probe);
    if (!made) return nullptr;
    std::unique_lock lock(mu_);
    if (const Real* existing = find_slot(library_map)) return existing;
    slots_.push_back(std::move(made));
    return slots_.back().get();
  }

  const Real* find_slot(const link_map* library_map) const {  // under mu_
    for (const auto& slot : slots_) {
      if (slot->link_map == library_map) return slot.get();
    }
    return nullptr;
  }

  std::shared_mutex mu_;
  std::unordered_map<std::uintptr_t, const Real*> by_call_site_;
  std::vector<std::unique_ptr<Real>> slots_;
  std::array<std::atomic<const Real*>, kMaxSlots> by_index_{};
};

}  // namespace nvrtc_cache::shim::interpose
