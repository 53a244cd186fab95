#include "shim/interpose/proxied_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "core/log.h"
#include "platform/errno_guard.h"
#include "shim/interpose/real_nvrtc.h"

namespace nvrtc_cache::shim::interpose {

void* open_proxied_library(const ProxiedLibrary& library) {
  const platform::ErrnoGuard errno_guard;
  const char* configured = std::getenv(library.variable);
  const char* path = configured && *configured ? configured : library.fallback;
  // dlopen of a library already open only takes a reference: each caller may open it.
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    try {
      const char* error = dlerror();
      core::log_once(core::LogLevel::kError, std::string("proxy-no-real-") + library.what,
                     std::string("proxy: cannot load the real ") + library.what + " (" + path + ", " +
                         (configured && *configured ? library.variable : "the toolkit's") +
                         "): " + (error ? error : "unknown error") + "; its calls fail as " + library.what + " fails");
    } catch (...) {
    }
  }
  return handle;
}

void* proxied_function(const ProxiedLibrary& library, const char* name) {
  void* handle = open_proxied_library(library);
  if (handle == nullptr || name == nullptr) return nullptr;
  void* found = library.node ? dlvsym(handle, name, library.node) : nullptr;
  return found ? found : real_dlsym(handle, name);
}

}  // namespace nvrtc_cache::shim::interpose
