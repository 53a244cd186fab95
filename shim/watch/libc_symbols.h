// libc_symbols: finds a function of the loaded C library by name and glibc version node by reading
// libc's dynamic symbol table in memory (GNU hash, version definitions).
// Contract: never allocates, never calls dlsym or anything the shim interposes, never takes a lock
// but the loader's (dl_iterate_phdr's, which is recursive); so it is safe inside a libc hook, in
// any thread, before the shim's constructors ran. Returns nullptr when libc or the symbol is not
// found. For the hooks' fallback only: at load the shim resolves through the loader (RTLD_NEXT),
// which also respects other interposers.
#pragma once

#include <link.h>

namespace nvrtc_cache::shim::watch {

// glibc's first version node on this architecture: the node of its oldest symbols (dlsym before 2.34,
// open, fopen, ...). shim/watch/watched_libc.def lists each watched function's node per architecture.
#if defined(__x86_64__)
inline constexpr char kGlibcBaseline[] = "GLIBC_2.2.5";
#elif defined(__aarch64__)
inline constexpr char kGlibcBaseline[] = "GLIBC_2.17";
#else
#error "nvrtc-cache supports x86-64 and aarch64 (CMakeLists.txt refuses other architectures)"
#endif

void* libc_function(const char* name, const char* version);

// A pointer from a loaded object's dynamic section: the loader relocates some in place and not
// others (and not at all on some architectures).
template <typename T>
const T* dynamic_pointer(ElfW(Addr) base, ElfW(Addr) value) {
  return reinterpret_cast<const T*>(value < base ? base + value : value);
}

}  // namespace nvrtc_cache::shim::watch
