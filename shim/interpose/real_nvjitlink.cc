#include "shim/interpose/real_nvjitlink.h"

#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "platform/errno_guard.h"
#include "platform/fork_locks.h"
#include "shim/interpose/library_identity.h"
#include "shim/interpose/loaded_object.h"
#include "shim/interpose/real_nvrtc.h"
#include "shim/interpose/wrapper_body.h"

namespace nvrtc_cache::shim::interpose {
namespace {

constexpr const char* kProbe = "nvJitLinkVersion";
constexpr std::string_view kPrivate = "__nvJitLinkAPI";

bool is_known_nvjitlink_function(const std::string& name) {
  return name == kProbe || name == kPrivate || !plain_nvjitlink_name(name.c_str()).empty();
}

// The function `nvJitLinkVersion` of the real library the caller's scope (or, failing that,
// anything loaded after the shim) reaches.
void* find_version_fn(const void* caller) {
  void* scope = scope_handle_of(link_map_of(caller));
  void* found = nullptr;
  for (const char* node : kNvJitLinkVersionNodes) {
    if (found == nullptr && scope) found = lookup_outside_shim(scope, kProbe, node);
  }
  if (scope) dlclose(scope);
  for (const char* node : kNvJitLinkVersionNodes) {
    if (found == nullptr) found = dlvsym(RTLD_NEXT, kProbe, node);
  }
  if (found == nullptr) found = real_dlsym(RTLD_NEXT, kProbe);
  return found && !in_shim(found) ? found : nullptr;
}

std::unique_ptr<RealNvJitLink> make_slot(void* version_fn) {
  const link_map* library_map = link_map_of(version_fn);
  if (library_map == nullptr) return nullptr;
  void* library = dlopen(library_map->l_name, RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return nullptr;
  auto slot = std::make_unique<RealNvJitLink>();
  slot->link_map = library_map;
  const char* node = kNvJitLinkVersionNodes[0];
#define NVJITLINK_API(kind, ret, name, params, args) \
  slot->name = reinterpret_cast<ret(*) params>(lookup_outside_shim(library, #name, node));
#include "shim/interpose/nvjitlink_api.def"
#undef NVJITLINK_API
  dlclose(library);  // NOLOAD handle: drops only the reference it took
  unsigned major = 0, minor = 0;
  if (reinterpret_cast<nvJitLinkResult (*)(unsigned*, unsigned*)>(version_fn)(&major, &minor) != NVJITLINK_SUCCESS) {
    return nullptr;
  }
  slot->identity.major = static_cast<int>(major);
  slot->identity.minor = static_cast<int>(minor);
  slot->identity.build_id = build_id_of_object_containing(version_fn);
  for (const char* prefix : {"nvJitLink", "__nvJitLink"}) {
    for (const std::string& name : exported_function_names(library_map, prefix)) {
      if (!is_known_nvjitlink_function(name)) slot->unknown_functions.push_back(name);
    }
  }
  return slot;
}

class LinkSlotRegistry {
 public:
  const RealNvJitLink* for_caller(const void* caller) {
    const auto site = reinterpret_cast<std::uintptr_t>(caller);
    {
      std::shared_lock lock(mu_);
      if (auto it = by_call_site_.find(site); it != by_call_site_.end()) return it->second;
    }
    void* version_fn = find_version_fn(caller);
    const RealNvJitLink* slot = version_fn ? adopt(version_fn) : nullptr;
    std::unique_lock lock(mu_);
    by_call_site_.emplace(site, slot);
    return slot;
  }

  int slot_for_function(const void* function) {
    const link_map* library_map = link_map_of(function);
    if (library_map == nullptr || library_map == shim_link_map()) return -1;
    {
      std::shared_lock lock(mu_);
      for (int i = 0; i < kMaxSlots; ++i) {
        const RealNvJitLink* slot = by_index_[static_cast<std::size_t>(i)].load(std::memory_order_acquire);
        if (slot && slot->link_map == library_map) return i;
      }
    }
    void* library = dlopen(library_map->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) return -1;
    void* version_fn = lookup_outside_shim(library, kProbe, kNvJitLinkVersionNodes[0]);
    dlclose(library);
    if (version_fn == nullptr || link_map_of(version_fn) != library_map) return -1;  // not nvJitLink
    const RealNvJitLink* slot = adopt(version_fn);
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

  const RealNvJitLink* slot_library(int slot) const {
    if (slot < 0 || slot >= kMaxSlots) return nullptr;
    return by_index_[static_cast<std::size_t>(slot)].load(std::memory_order_acquire);
  }

  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child() { platform::renew_in_child(mu_); }

 private:
  // Made with no lock held (fork() never waits for the loader); one made twice by racing threads is dropped.
  const RealNvJitLink* adopt(void* version_fn) {
    const link_map* library_map = link_map_of(version_fn);
    {
      std::shared_lock lock(mu_);
      if (const RealNvJitLink* existing = find_slot(library_map)) return existing;
    }
    auto made = make_slot(version_fn);
    if (!made) return nullptr;
    std::unique_lock lock(mu_);
    if (const RealNvJitLink* existing = find_slot(library_map)) return existing;
    slots_.push_back(std::move(made));
    return slots_.back().get();
  }

  const RealNvJitLink* find_slot(const link_map* library_map) const {  // under mu_
    for (const auto& slot : slots_) {
      if (slot->link_map == library_map) return slot.get();
    }
    return nullptr;
  }

  std::shared_mutex mu_;
  std::unordered_map<std::uintptr_t, const RealNvJitLink*> by_call_site_;
  std::vector<std::unique_ptr<RealNvJitLink>> slots_;
  std::array<std::atomic<const RealNvJitLink*>, kMaxSlots> by_index_{};
};

LinkSlotRegistry& registry() {
  static auto* instance = new LinkSlotRegistry();  // leaked: callable from exit handlers
  return *instance;
}

__attribute__((constructor)) void register_fork_locks() {
  platform::join_fork_order_of<&registry>(platform::ForkRank::kLinkSlotRegistry);
}

// Wrappers bound to a slot, handed to dlsym clients.
template <int Slot>
struct SlotWrappers {
#define NVJITLINK_API(kind, ret, name, params, args) \
  static ret name params NVRTC_CACHE_WRAPPER_BODY(kind, ret, name, args, nvjitlink_slot_library(Slot), nullptr)
#include "shim/interpose/nvjitlink_api.def"
#undef NVJITLINK_API
};

struct Row {
  const char* name;
  std::array<void*, kMaxSlots> wrappers;
};

template <std::size_t... Slots>
auto build_rows(std::index_sequence<Slots...>) {
  return std::array{
#define NVJITLINK_API(kind, ret, name, params, args) \
  Row{#name, {reinterpret_cast<void*>(&SlotWrappers<static_cast<int>(Slots)>::name)...}},
#include "shim/interpose/nvjitlink_api.def"
#undef NVJITLINK_API
  };
}

const auto& rows() {
  static const auto table = build_rows(std::make_index_sequence<kMaxSlots>{});
  return table;
}

// Built at load, so no child of a forked process inherits its creation in progress.
__attribute__((constructor)) void build_rows_at_load() { (void)rows(); }

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
#define NVJITLINK_API(kind, ret, fn, params, args) \
  if (n == #fn) return #fn;
#include "shim/interpose/nvjitlink_api.def"
#undef NVJITLINK_API
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
  if (slot < 0 || slot >= kMaxSlots) return nullptr;
  const std::string plain = plain_nvjitlink_name(name);
  if (plain.empty()) return nullptr;
  for (const Row& row : rows()) {
    if (plain == row.name) return row.wrappers[static_cast<std::size_t>(slot)];
  }
  return nullptr;
}

}  // namespace nvrtc_cache::shim::interpose
