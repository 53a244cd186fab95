// Proxy mode has no dlsym hook: the proxy is the library clients open, so their dlsym lookups land
// on its own exports. real_dlsym is glibc's dlsym itself.
#include <dlfcn.h>

#include "libraries/nvrtc/real_nvrtc.h"

namespace nvrtc_cache::shim::interpose {

void* real_dlsym(void* handle, const char* name) { return dlsym(handle, name); }

}  // namespace nvrtc_cache::shim::interpose
