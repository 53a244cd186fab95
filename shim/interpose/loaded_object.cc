#include "shim/interpose/loaded_object.h"

#include <dlfcn.h>

#include <atomic>

#include "libraries/nvrtc/real_nvrtc.h"

namespace nvrtc_cache::shim::interpose {
namespace {

const void* self_marker() { return reinterpret_cast<const void*>(&self_marker); }

}  // namespace

const link_map* link_map_of(const void* address) {
  Dl_info info;
  void* extra = nullptr;
  if (dladdr1(address, &info, &extra, RTLD_DL_LINKMAP) == 0) return nullptr;
  return static_cast<const link_map*>(extra);
}

std::string library_path_of(const void* map, const void* code) {
  if (map != nullptr) {
    const char* name = static_cast<const link_map*>(map)->l_name;
    if (name != nullptr && name[0] == '/') return name;
  }
  Dl_info info;
  if (code != nullptr && dladdr(code, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return {};
}

// Looked up once: the same in every thread and after fork.
const link_map* shim_link_map() {
  static constinit std::atomic<const link_map*> cached{nullptr};
  const link_map* map = cached.load(std::memory_order_acquire);
  if (map == nullptr) {
    map = link_map_of(self_marker());
    cached.store(map, std::memory_order_release);
  }
  return map;
}

bool in_shim(const void* address) { return address && link_map_of(address) == shim_link_map(); }

void* scope_handle_of(const link_map* caller) {
  if (caller == nullptr || caller->l_name == nullptr || caller->l_name[0] == '\0') {
    return dlopen(nullptr, RTLD_LAZY);
  }
  return dlopen(caller->l_name, RTLD_LAZY | RTLD_NOLOAD);
}

void* lookup_outside_shim(void* library, const char* name, const char* node) {
  void* fn = node ? dlvsym(library, name, node) : real_dlsym(library, name);
  if (fn == nullptr) fn = real_dlsym(library, name);
  return in_shim(fn) ? nullptr : fn;
}

}  // namespace nvrtc_cache::shim::interpose
