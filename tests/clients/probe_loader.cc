// A PyTorch-style intermediate library: opened RTLD_LOCAL by the probe, it dlopens NVRTC itself
// (RTLD_LOCAL too) and hands out dlsym results on that handle.
#include <dlfcn.h>

extern "C" __attribute__((visibility("default"))) void* probe_loader_lookup(const char* name) {
  static void* nvrtc = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
  return nvrtc ? dlsym(nvrtc, name) : nullptr;
}
