// __nvrtcCPEx for the Windows proxy (x64 calling convention): NVRTC's private entry point, signature
// unknown. Asks for the real DLL's (nvrtc_cache_windows_cpex, shim/windows/proxy_exports.cc), then
// jumps to it with the argument registers (rcx, rdx, r8, r9, xmm0-xmm3) and the caller's stack
// arguments exactly as the caller left them; without a real one, returns 11
// (NVRTC_ERROR_INTERNAL_ERROR).
  .text
  .globl __nvrtcCPEx
  .def __nvrtcCPEx; .scl 2; .type 32; .endef
__nvrtcCPEx:
  pushq %rbp
  movq %rsp, %rbp
  pushq %rcx
  pushq %rdx
  pushq %r8
  pushq %r9
  subq $96, %rsp
  movdqu %xmm0, 32(%rsp)
  movdqu %xmm1, 48(%rsp)
  movdqu %xmm2, 64(%rsp)
  movdqu %xmm3, 80(%rsp)
  call nvrtc_cache_windows_cpex
  movq %rax, %r11
  movdqu 32(%rsp), %xmm0
  movdqu 48(%rsp), %xmm1
  movdqu 64(%rsp), %xmm2
  movdqu 80(%rsp), %xmm3
  addq $96, %rsp
  popq %r9
  popq %r8
  popq %rdx
  popq %rcx
  popq %rbp
  testq %r11, %r11
  jz 1f
  jmp *%r11
1:
  movl $11, %eax
  ret
