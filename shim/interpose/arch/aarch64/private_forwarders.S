// NVRTC's private entry points for aarch64 (__nvrtcCPEx; __nvrtcNvvmHandle since 13.5), signatures unknown.
// Each resolves the caller's real one (nvrtc_cache_resolve_private, libraries/nvrtc/exports.cc, given the
// return address and which entry point: its index in kPrivateNvrtcFunctions), then jumps to it with every
// argument register (x0-x7, the indirect result register x8, q0-q7) and the link register exactly as the
// caller left them; without a real one, returns 11 (NVRTC_ERROR_INTERNAL_ERROR).
  .text
  .macro private_forwarder name, which
  .globl \name
  .type \name, %function
  .p2align 2
\name:
  .cfi_startproc
  stp x29, x30, [sp, #-224]!
  .cfi_def_cfa_offset 224
  .cfi_offset x29, -224
  .cfi_offset x30, -216
  mov x29, sp
  stp x0, x1, [sp, #16]
  stp x2, x3, [sp, #32]
  stp x4, x5, [sp, #48]
  stp x6, x7, [sp, #64]
  str x8, [sp, #80]
  stp q0, q1, [sp, #96]
  stp q2, q3, [sp, #128]
  stp q4, q5, [sp, #160]
  stp q6, q7, [sp, #192]
  mov x0, x30
  mov w1, #\which
  bl nvrtc_cache_resolve_private
  mov x16, x0
  ldp q6, q7, [sp, #192]
  ldp q4, q5, [sp, #160]
  ldp q2, q3, [sp, #128]
  ldp q0, q1, [sp, #96]
  ldr x8, [sp, #80]
  ldp x6, x7, [sp, #64]
  ldp x4, x5, [sp, #48]
  ldp x2, x3, [sp, #32]
  ldp x0, x1, [sp, #16]
  ldp x29, x30, [sp], #224
  .cfi_restore x29
  .cfi_restore x30
  .cfi_def_cfa_offset 0
  cbz x16, \@f
  br x16
\@:
  mov w0, #11
  ret
  .cfi_endproc
  .size \name, .-\name
  .endm

  private_forwarder __nvrtcCPEx, 0
  private_forwarder __nvrtcNvvmHandle, 1
  .section .note.GNU-stack,"",%progbits
