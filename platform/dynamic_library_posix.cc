#include "platform/dynamic_library.h"

#include <dlfcn.h>

namespace nvrtc_cache::platform {

void* load_library(const std::string& path, std::string* error) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = why != nullptr ? why : "unknown error";
  }
  return handle;
}

void* library_function(void* library, const char* name) { return dlsym(library, name); }

}  // namespace nvrtc_cache::platform
