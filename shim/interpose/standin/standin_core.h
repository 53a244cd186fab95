// What the stand-ins libnvJitLink.so.13 and libnvvm.so.4 (proxy mode, lib/nvrtc-cache/proxy/) share:
// finding their proxy core, the proxy libnvrtc.so.13 beside them, which holds the process's one cache
// runtime and the hooks (shim/interpose/proxy_entries.h); and forwarding the real library's functions
// the hooks do not handle (the version getters, the private entry points) untouched.
// A stand-in carries no runtime of its own: it loads the core (the one already loaded as
// libnvrtc.so.13 when that is the core, else the file beside the stand-in, RTLD_LOCAL) and asks it for
// the table; the core opens the real library by absolute path. The stand-in's constructor does both,
// so the real library is loaded when the stand-in is, as it would have been without the proxy.
// Contract: never throws; nothing on stdout; a core that cannot be loaded is said once on stderr and
// every call then fails with the library's own error code (the hooks' failure results).
#pragma once

#include "shim/interpose/export.h"
#include "shim/interpose/proxy_entries.h"

namespace nvrtc_cache::shim::standin {

// The core's table, or nullptr when the core cannot be loaded (said once on stderr, naming `what`,
// the stand-in: "libnvJitLink.so.13"). Thread-safe; loads the core on its first call.
const interpose::ProxyEntries* core_entries(const char* what);

// Each of `names`' real function (ProxyEntries::real_function) into `slots`, nullptr where there is none.
void resolve_real_functions(const char* what, interpose::ProxiedKind kind, const char* const* names, void** slots,
                            int count);

// Whether a dlsym of `name` finds the stand-in's function: where the real library has that function
// (in its version node), and where there is no real library (`probe`, a function every one has, is not
// found) or no core to ask, so that a client gets the functions, each failing with the library's error
// code, rather than none.
bool dlsym_finds(const char* what, interpose::ProxiedKind kind, const char* name, const char* probe);

// Whether an indirect function's resolver, called from `resolver_caller`, was called by the dynamic
// loader (relocations before the stand-in's constructors, lazy binding) rather than by dlsym.
bool resolving_for_the_loader(const void* resolver_caller);

}  // namespace nvrtc_cache::shim::standin

// The exported name `exported` of the stand-in's function standin_<name> (static, of type ret params),
// as a GNU indirect function whose resolver answers as the real library would: to a dlsym or dlvsym,
// the function where the real library (ProxiedKind `kind`, through the core) has that very name, NULL
// where it does not (a client probing a 13.0 nvJitLink for nvJitLinkGetLinkedLTOIR finds none), the
// function for every name when no real library can be loaded (dlsym_finds, `probe` a name every one
// has); to the dynamic loader (a linked client's relocations, lazy binding), always the function,
// which answers a call to a function the real library lacks as the loader would have (exit status 127).
#define NVRTC_CACHE_STANDIN_NAME(what, kind, probe, ret, name, exported, params)                              \
  extern "C" __attribute__((used)) auto nvrtc_cache_resolve_##exported()->ret(*) params {                     \
    if (nvrtc_cache::shim::standin::resolving_for_the_loader(__builtin_return_address(0))) {                  \
      return &standin_##name;                                                                                 \
    }                                                                                                         \
    return nvrtc_cache::shim::standin::dlsym_finds(what, kind, #exported, probe) ? &standin_##name : nullptr; \
  }                                                                                                           \
  NVRTC_CACHE_EXPORT ret exported params __attribute__((ifunc("nvrtc_cache_resolve_" #exported)));

// The exported entry point `name` of unknown signature: a jump to the function at `offset` bytes into
// `slots` (a hidden void* array of the stand-in, filled by resolve_real_functions) with every argument
// register as the caller left it, or, without a real function, a return of `code` in the integer
// result register.
#if defined(__x86_64__)
#define NVRTC_CACHE_STANDIN_JUMP(name, slots, offset, code)                                                         \
  __asm__(".text\n.globl " #name "\n.type " #name ", @function\n.p2align 4\n" #name                                 \
          ":\n"                                                                                                     \
          "  movq " #slots "+" #offset "(%rip), %r11\n  testq %r11, %r11\n  jz 1f\n  jmp *%r11\n1:\n  movl $" #code \
          ", %eax\n  ret\n.size " #name ", .-" #name "\n");
#elif defined(__aarch64__)
#define NVRTC_CACHE_STANDIN_JUMP(name, slots, offset, code)                                 \
  __asm__(".text\n.globl " #name "\n.type " #name ", %function\n.p2align 2\n" #name         \
          ":\n"                                                                             \
          "  adrp x16, " #slots "+" #offset "\n  ldr x16, [x16, #:lo12:" #slots "+" #offset \
          "]\n  cbz x16, 1f\n  br x16\n1:\n  mov w0, #" #code "\n  ret\n.size " #name ", .-" #name "\n");
#else
#error "no stand-in forwarders for this architecture"
#endif
