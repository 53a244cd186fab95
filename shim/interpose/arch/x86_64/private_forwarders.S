// NVRTC's private entry points for x86_64 (__nvrtcCPEx; __nvrtcNvvmHandle since 13.5), signatures unknown.
// Each resolves the caller's real one (nvrtc_cache_resolve_private, libraries/nvrtc/exports.cc, given the
// return address and which entry point: its index in kPrivateNvrtcFunctions), then jumps to it with every
// argument register (integer, vector and %al, the vector count of a variadic call) exactly as the caller
// left them; without a real one, returns 11 (NVRTC_ERROR_INTERNAL_ERROR).
  .text
  .macro private_forwarder name, which
  .globl \name
  .type \name, @function
\name:
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
  movl $\which, %esi
  call nvrtc_cache_resolve_private
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
  jz \@f
  jmp *%r11
\@:
  movl $11, %eax
  ret
  .cfi_endproc
  .size \name, .-\name
  .endm

  private_forwarder __nvrtcCPEx, 0
  private_forwarder __nvrtcNvvmHandle, 1
  .section .note.GNU-stack,"",@progbits
