// Another preloaded library, as profilers and tracers are: it interposes open() and
// nvrtcGetErrorString() and reaches the next definitions with dlsym(RTLD_NEXT, ...). Preloaded beside
// the shim (either order), neither may recurse.
#include <dlfcn.h>
#include <nvrtc.h>

#include <cstdarg>
#include <fcntl.h>

extern "C" __attribute__((visibility("default"))) int open(const char* path, int flags, ...) {
  static auto next = reinterpret_cast<int (*)(const char*, int, ...)>(dlsym(RTLD_NEXT, "open"));
  mode_t mode = 0;
  if (flags & O_CREAT) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  return next(path, flags, mode);
}

extern "C" __attribute__((visibility("default"))) const char* nvrtcGetErrorString(nvrtcResult result) {
  static auto next = reinterpret_cast<const char* (*)(nvrtcResult)>(dlsym(RTLD_NEXT, "nvrtcGetErrorString"));
  return next ? next(result) : "probe_preload: no next nvrtcGetErrorString";
}
