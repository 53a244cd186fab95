#include "shim/interpose/standin/standin_core.h"

#include <dlfcn.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include <climits>
#include <cstring>

#include "shim/interpose/ifunc_caller.h"

namespace nvrtc_cache::shim::standin {
namespace {

using interpose::ProxyEntries;
using GetEntries = const ProxyEntries* (*)();

void say(const char* const* parts) {
  for (; *parts != nullptr; ++parts) {
    const char* part = *parts;
    for (std::size_t left = std::strlen(part); left > 0;) {
      const ssize_t n = ::write(STDERR_FILENO, part, left);
      if (n <= 0) return;
      part += n;
      left -= static_cast<std::size_t>(n);
    }
  }
}

const ProxyEntries* entries_of(void* core) {
  if (core == nullptr) return nullptr;
  auto get = reinterpret_cast<GetEntries>(dlsym(core, interpose::kProxyEntriesSymbol));
  const ProxyEntries* entries = get ? get() : nullptr;
  return entries && entries->abi == interpose::kProxyEntriesAbi ? entries : nullptr;
}

const ProxyEntries* load_core(const char* what) {
  // The core this process already loaded as libnvrtc.so.13 (a real NVRTC loaded under that name has
  // no table: the one beside the stand-in is loaded then).
  if (void* loaded = dlopen("libnvrtc.so.13", RTLD_LAZY | RTLD_NOLOAD)) {
    if (const ProxyEntries* entries = entries_of(loaded)) return entries;  // the reference is kept
    dlclose(loaded);
  }
  char path[PATH_MAX] = "";
  Dl_info self;
  if (dladdr(reinterpret_cast<const void*>(&load_core), &self) != 0 && self.dli_fname != nullptr) {
    const char* slash = std::strrchr(self.dli_fname, '/');
    const std::size_t dir = slash ? static_cast<std::size_t>(slash - self.dli_fname) + 1 : 0;
    constexpr char kCore[] = "libnvrtc.so.13";
    if (dir + sizeof kCore <= sizeof path) {
      std::memcpy(path, self.dli_fname, dir);
      std::memcpy(path + dir, kCore, sizeof kCore);
    }
  }
  void* core = path[0] ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  const char* error = core ? nullptr : dlerror();
  if (const ProxyEntries* entries = entries_of(core)) return entries;
  const char* parts[] = {"nvrtc-cache: proxy ",
                         what,
                         ": cannot use its core ",
                         path[0] ? path : "libnvrtc.so.13",
                         ": ",
                         error ? error : "not an nvrtc-cache proxy of this version",
                         "; its calls fail\n",
                         nullptr};
  say(parts);
  return nullptr;
}

std::atomic<bool> constructed{false};
__attribute__((constructor)) void mark_constructed() { constructed.store(true); }

}  // namespace

bool resolving_for_the_loader(const void* resolver_caller) {
  return interpose::resolver_called_by_the_loader(resolver_caller, constructed.load());
}

bool dlsym_finds(const char* what, interpose::ProxiedKind kind, const char* name, const char* probe) {
  const ProxyEntries* entries = core_entries(what);
  if (entries == nullptr || entries->real_function(kind, probe) == nullptr) return true;  // no real library
  // Looked up last: where the real library lacks `name`, its failed lookup is what dlerror() then says
  // (a dlsym answered NULL without an error would leave dlerror() NULL: ctypes crashes on that).
  return entries->real_function(kind, name) != nullptr;
}

const ProxyEntries* core_entries(const char* what) {
  static const ProxyEntries* const entries = load_core(what);  // thread-safe, once
  return entries;
}

void resolve_real_functions(const char* what, interpose::ProxiedKind kind, const char* const* names, void** slots,
                            int count) {
  const ProxyEntries* entries = core_entries(what);
  for (int i = 0; i < count; ++i) {
    void* found = entries ? entries->real_function(kind, names[i]) : nullptr;
    __atomic_store_n(&slots[i], found, __ATOMIC_RELEASE);
  }
}

}  // namespace nvrtc_cache::shim::standin
