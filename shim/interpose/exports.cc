// The shim's exported NVRTC API, generated from shim/interpose/nvrtc_api.def: each wrapper finds the real
// NVRTC of its caller and either forwards (PASS) or hands over to hooks:: (HOOK). Nothing thrown
// inside can cross this C boundary.
#include <nvrtc.h>

#include "shim/interpose/export.h"
#include "shim/interpose/real_nvrtc.h"
#include "shim/interpose/wrapper_body.h"

#define NVRTC_API(kind, ret, name, params, args)               \
  NVRTC_CACHE_EXPORT ret name params NVRTC_CACHE_WRAPPER_BODY( \
      kind, ret, name, args, nvrtc_cache::shim::interpose::real_nvrtc_for_caller(__builtin_return_address(0)))
#include "shim/interpose/nvrtc_api.def"
#undef NVRTC_API

// Per-major wrappers: a library linked against NVRTC 12 or 11.2 references nvrtcX@libnvrtc.so.12 /
// @libnvrtc.so.11.2; those bind to these (the plain exports above are the default,
// nvrtcX@@libnvrtc.so.13), which route only to a real NVRTC of that major. Two majors linked into
// one process each reach their own.
#define NVRTC_CACHE_MAJOR_WRAPPER(tag, node_index, node_name, kind, ret, name, params, args)                 \
  NVRTC_CACHE_EXPORT_USED ret nvrtc_cache_##tag##_##name params NVRTC_CACHE_WRAPPER_BODY(                    \
      kind, ret, name, args,                                                                                 \
      nvrtc_cache::shim::interpose::real_nvrtc_for_caller(                                                   \
          __builtin_return_address(0), node_index)) __asm__(".symver nvrtc_cache_" #tag "_" #name ", " #name \
                                                            "@" node_name);
#define NVRTC_API(kind, ret, name, params, args) \
  NVRTC_CACHE_MAJOR_WRAPPER(v12, 1, "libnvrtc.so.12", kind, ret, name, params, args)
#include "shim/interpose/nvrtc_api.def"
#undef NVRTC_API
#define NVRTC_API(kind, ret, name, params, args) \
  NVRTC_CACHE_MAJOR_WRAPPER(v11_2, 2, "libnvrtc.so.11.2", kind, ret, name, params, args)
#include "shim/interpose/nvrtc_api.def"
#undef NVRTC_API

using nvrtc_cache::shim::interpose::RealNvrtc;

// __nvrtcCPEx: private, signature unknown. Resolve the caller's real one, then jump to it with every
// argument register (integer and vector) exactly as the caller left them.
extern "C" __attribute__((visibility("hidden"), used)) void* nvrtc_cache_resolve_cpex(const void* caller) {
  const RealNvrtc* real = nvrtc_cache::shim::interpose::real_nvrtc_for_caller(caller);
  return real ? real->cpex : nullptr;
}

asm(R"(
  .text
  .globl __nvrtcCPEx
  .type __nvrtcCPEx, @function
__nvrtcCPEx:
  .cfi_startproc
  pushq %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  movq %rsp, %rbp
  .cfi_def_cfa_register %rbp
  pushq %rdi
  pushq %rsi
  pushq %rdx
  pushq %rcx
  pushq %r8
  pushq %r9
  pushq %rax
  subq $136, %rsp
  movdqu %xmm0, 0(%rsp)
  movdqu %xmm1, 16(%rsp)
  movdqu %xmm2, 32(%rsp)
  movdqu %xmm3, 48(%rsp)
  movdqu %xmm4, 64(%rsp)
  movdqu %xmm5, 80(%rsp)
  movdqu %xmm6, 96(%rsp)
  movdqu %xmm7, 112(%rsp)
  movq 8(%rbp), %rdi
  call nvrtc_cache_resolve_cpex
  movq %rax, %r11
  movdqu 0(%rsp), %xmm0
  movdqu 16(%rsp), %xmm1
  movdqu 32(%rsp), %xmm2
  movdqu 48(%rsp), %xmm3
  movdqu 64(%rsp), %xmm4
  movdqu 80(%rsp), %xmm5
  movdqu 96(%rsp), %xmm6
  movdqu 112(%rsp), %xmm7
  addq $136, %rsp
  popq %rax
  popq %r9
  popq %r8
  popq %rcx
  popq %rdx
  popq %rsi
  popq %rdi
  popq %rbp
  .cfi_def_cfa %rsp, 8
  testq %r11, %r11
  jz 1f
  jmp *%r11
1:
  movl $11, %eax
  ret
  .cfi_endproc
  .size __nvrtcCPEx, .-__nvrtcCPEx
)");
