#include "store/lmdb/library.h"

#ifndef NVRTC_CACHE_LMDB_LINKED
#include <dlfcn.h>
#endif

#include <atomic>
#include <tuple>
#include <type_traits>
#include <variant>

#include "platform/errno_guard.h"
#include "platform/fault_guard.h"
#include "platform/fork_locks.h"

namespace nvrtc_cache::store::lmdb {
namespace {

struct Loaded {
  LmdbLibrary library;
  bool ok = false;
  std::string error;
};

#ifdef NVRTC_CACHE_LMDB_LINKED
// LMDB is built into this library (hidden symbols): the table is its functions' addresses.
Loaded load() {
  Loaded loaded;
#define NVRTC_CACHE_LMDB_ADDRESS(name) loaded.library.name = &::name;
  NVRTC_CACHE_LMDB_FUNCTIONS(NVRTC_CACHE_LMDB_ADDRESS)
#undef NVRTC_CACHE_LMDB_ADDRESS
  loaded.ok = true;
  return loaded;
}
#else
Loaded load() {
  Loaded loaded;
  constexpr int kFlags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
  void* handle = nullptr;
#ifdef NVRTC_CACHE_LMDB_PATH
  // The library found at build time, by its path: no search of the host's library path (each
  // directory there costs a few failed opens in every process's first compile).
  handle = dlopen(NVRTC_CACHE_LMDB_PATH, kFlags);
#endif
  if (handle == nullptr) handle = dlopen("liblmdb.so.0", kFlags);
  if (handle == nullptr) {
    const char* why = dlerror();
    loaded.error = std::string("cannot load liblmdb.so.0: ") + (why ? why : "unknown error");
    return loaded;
  }
#define NVRTC_CACHE_LMDB_RESOLVE(name)                                             \
  loaded.library.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (loaded.library.name == nullptr) {                                            \
    loaded.error = "liblmdb.so.0 lacks " #name;                                    \
    return loaded;                                                                 \
  }
  NVRTC_CACHE_LMDB_FUNCTIONS(NVRTC_CACHE_LMDB_RESOLVE)
#undef NVRTC_CACHE_LMDB_RESOLVE
  loaded.ok = true;
  return loaded;
}
#endif

// Both tables are published lock-free (publish_once, platform/fork_locks.h): a static guard held
// across dlopen could be inherited "in progress" by a child forked meanwhile.
std::atomic<Loaded*> g_loaded{nullptr};
std::atomic<LmdbLibrary*> g_guarded{nullptr};

}  // namespace

const LmdbLibrary* lmdb_library(std::string* error) {
  const Loaded* loaded = platform::publish_once(g_loaded, [] {
    const platform::ErrnoGuard errno_guard;
    return new Loaded(load());  // leaked: used until exit (RTLD_NODELETE: loading twice is harmless)
  });
  if (!loaded->ok) {
    if (error) *error = loaded->error;
    return nullptr;
  }
  return &loaded->library;
}

namespace {

template <typename R>
R fault_result() {
  if constexpr (std::is_same_v<R, int>) {
    return MDB_CORRUPTED;
  } else {
    return R{};
  }
}

// Wraps LmdbLibrary::*Member (of type R(*)(A...)) so that it runs under the fault guard. The
// guarded frame holds only plain data: leaving it by siglongjmp skips no destructor.
template <auto Member, typename Fn>
struct Guarded;
template <auto Member, typename R, typename... A>
struct Guarded<Member, R (*)(A...)> {
  struct Frame {
    std::tuple<A...>* args;
    [[no_unique_address]] std::conditional_t<std::is_void_v<R>, std::monostate, R> result;
  };
  static void body(void* raw) {
    auto* frame = static_cast<Frame*>(raw);
    const LmdbLibrary& library = *lmdb_library();
    if constexpr (std::is_void_v<R>) {
      std::apply(library.*Member, *frame->args);
    } else {
      frame->result = std::apply(library.*Member, *frame->args);
    }
  }
  static R call(A... args) {
    std::tuple<A...> packed(args...);
    Frame frame{&packed, {}};
    if (!platform::run_guarded(&Guarded::body, &frame)) {
      if constexpr (!std::is_void_v<R>)
        return fault_result<R>();
      else
        return;
    }
    if constexpr (!std::is_void_v<R>) return frame.result;
  }
};

void on_lmdb_assert(MDB_env*, const char*) { platform::escape_if_guarded(); }

}  // namespace

const LmdbLibrary* guarded_lmdb_library() {
  if (lmdb_library() == nullptr) return nullptr;
  return platform::publish_once(g_guarded, [] {
    auto* table = new LmdbLibrary(*lmdb_library());  // leaked: used until exit
    // Only functions that read pages without allocating: leaving LMDB by siglongjmp while it holds
    // malloc's locks or is halfway through changing its own structures (writes) would turn a
    // crash into a deadlock or a corrupted heap. Writes are kept away from damaged stores instead:
    // any sign of damage moves the store aside before the next write.
#define NVRTC_CACHE_LMDB_GUARD(name) table->name = &Guarded<&LmdbLibrary::name, decltype(LmdbLibrary::name)>::call;
    NVRTC_CACHE_LMDB_GUARD(mdb_get)
    NVRTC_CACHE_LMDB_GUARD(mdb_cursor_get)
    NVRTC_CACHE_LMDB_GUARD(mdb_stat)
    NVRTC_CACHE_LMDB_GUARD(mdb_dbi_open)  // looks the name up in the main tree before it allocates
#undef NVRTC_CACHE_LMDB_GUARD
    return table;
  });
}

void install_assert_guard(MDB_env* env) {
  if (const LmdbLibrary* library = lmdb_library()) library->mdb_env_set_assert(env, &on_lmdb_assert);
}

}  // namespace nvrtc_cache::store::lmdb
