#include "store/lmdb_library.h"

#include <dlfcn.h>

#include <cerrno>

namespace nvrtc_cache::store {
namespace {

struct Loaded {
  LmdbLibrary library;
  bool ok = false;
  std::string error;
};

Loaded load() {
  Loaded loaded;
  void* handle = dlopen("liblmdb.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    loaded.error = std::string("cannot load liblmdb.so.0: ") + (why ? why : "unknown error");
    return loaded;
  }
#define NVRTC_CACHE_LMDB_RESOLVE(name)                                                   \
  loaded.library.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));    \
  if (loaded.library.name == nullptr) {                                                  \
    loaded.error = "liblmdb.so.0 lacks " #name;                                          \
    return loaded;                                                                       \
  }
  NVRTC_CACHE_LMDB_FUNCTIONS(NVRTC_CACHE_LMDB_RESOLVE)
#undef NVRTC_CACHE_LMDB_RESOLVE
  loaded.ok = true;
  return loaded;
}

}  // namespace

const LmdbLibrary* lmdb_library(std::string* error) {
  static const Loaded* loaded = [] {
    const int saved_errno = errno;
    auto* l = new Loaded(load());  // leaked: used until exit
    errno = saved_errno;
    return l;
  }();
  if (!loaded->ok) {
    if (error) *error = loaded->error;
    return nullptr;
  }
  return &loaded->library;
}

}  // namespace nvrtc_cache::store
