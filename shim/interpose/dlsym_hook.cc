// The shim's dlsym: JIT stacks that dlopen NVRTC and look its functions up with dlsym(handle, ...)
// get wrappers bound to the library behind the handle (shim/interpose/slot_wrappers.h); every other lookup,
// and every RTLD_NEXT lookup, is a tail jump to glibc's dlsym, so glibc still sees the original caller (RTLD_NEXT and
// RTLD_DEFAULT keep their meaning, and a second preloaded library's dlsym(RTLD_NEXT, ...) cannot
// recurse). The fast path allocates nothing and takes no lock. The entry point itself is
// shim/interpose/arch/<architecture>/dlsym_entry.S.
#include <dlfcn.h>

#include <atomic>

#include "libraries/nvjitlink/real_nvjitlink.h"
#include "libraries/nvvm/real_nvvm.h"
#include "libraries/nvrtc/real_nvrtc.h"
#include "shim/interpose/slot_wrappers.h"
#include "shim/watch/libc_symbols.h"

using DlsymFn = void* (*)(void*, const char*);

extern "C" {
__attribute__((visibility("hidden"), used)) void* nvrtc_cache_real_dlsym_ptr = nullptr;

__attribute__((visibility("hidden"), used)) void* nvrtc_cache_resolve_real_dlsym() {
  void* fn = __atomic_load_n(&nvrtc_cache_real_dlsym_ptr, __ATOMIC_ACQUIRE);
  if (fn) return fn;
  fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (fn == nullptr) fn = dlvsym(RTLD_NEXT, "dlsym", nvrtc_cache::shim::watch::kGlibcBaseline);
  __atomic_store_n(&nvrtc_cache_real_dlsym_ptr, fn, __ATOMIC_RELEASE);
  return fn;
}

// Reached by a jump from dlsym below for names starting with "nvrtc", "nvJ", "__nvJ" or "nvvm": the return address is
// still the client's.
__attribute__((visibility("hidden"), used)) void* nvrtc_cache_dlsym_nvrtc(void* handle, const char* name) {
  using namespace nvrtc_cache::shim::interpose;
  // RTLD_DEFAULT: answer as glibc would without the shim (search after it), so a process that has
  // not loaded NVRTC does not find the shim's exports.
  void* found = real_dlsym(handle == RTLD_DEFAULT ? RTLD_NEXT : handle, name);
  if (found == nullptr || address_in_shim(found)) return found;
  if (name[2] == 'v') {  // libNVVM's ("nvvm...": the entry's test)
    const int nvvm_slot = nvvm_slot_for_function(found);
    if (nvvm_slot < 0) return found;
    void* wrapper = nvvm_slot_wrapper(nvvm_slot, name);
    return wrapper ? wrapper : found;
  }
  if (name[0] == '_' || name[2] == 'J') {  // nvJitLink's ("nvJ...", "__nvJ...": the entry's test)
    const int link_slot = nvjitlink_slot_for_function(found);
    if (link_slot < 0) return found;
    void* wrapper = nvjitlink_slot_wrapper(link_slot, name);
    return wrapper ? wrapper : found;
  }
  const int slot = slot_for_function(found);
  if (slot < 0) return found;
  void* wrapper = slot_wrapper(slot, name);
  return wrapper ? wrapper : found;
}
}

__attribute__((constructor(101))) static void resolve_real_dlsym_at_load() { nvrtc_cache_resolve_real_dlsym(); }

namespace nvrtc_cache::shim::interpose {

void* real_dlsym(void* handle, const char* name) {
  auto fn = reinterpret_cast<DlsymFn>(nvrtc_cache_resolve_real_dlsym());
  return fn ? fn(handle, name) : nullptr;
}

}  // namespace nvrtc_cache::shim::interpose
