// dlsym for x86-64 (shim/interpose/dlsym_hook.cc), exported as dlsym@@GLIBC_2.34 and dlsym@GLIBC_2.2.5:
// a name starting with "nvrtc", "nvJ" or "__nvJ" (nvJitLink's) or "nvvm" (libNVVM's) on a handle other than RTLD_NEXT goes to
// nvrtc_cache_dlsym_nvrtc; every
// other lookup is a tail jump to glibc's dlsym, so glibc still sees the original caller.
  .text
  .globl nvrtc_cache_dlsym
  .type nvrtc_cache_dlsym, @function
  .symver nvrtc_cache_dlsym, dlsym@@GLIBC_2.34
  .globl nvrtc_cache_dlsym_compat
  .type nvrtc_cache_dlsym_compat, @function
  .symver nvrtc_cache_dlsym_compat, dlsym@GLIBC_2.2.5
nvrtc_cache_dlsym:
nvrtc_cache_dlsym_compat:
  .cfi_startproc
  cmpq $-1, %rdi
  je 2f
  testq %rsi, %rsi
  jz 2f
  cmpb $0x5f, 0(%rsi)
  je 5f
  cmpb $0x6e, 0(%rsi)
  jne 2f
  cmpb $0x76, 1(%rsi)
  jne 2f
  cmpb $0x4a, 2(%rsi)
  je 6f
  cmpb $0x76, 2(%rsi)
  jne 7f
  cmpb $0x6d, 3(%rsi)
  je 6f
  jmp 2f
7:
  cmpb $0x72, 2(%rsi)
  jne 2f
  cmpb $0x74, 3(%rsi)
  jne 2f
  cmpb $0x63, 4(%rsi)
  jne 2f
6:
  jmp nvrtc_cache_dlsym_nvrtc
5:
  cmpb $0x5f, 1(%rsi)
  jne 2f
  cmpb $0x6e, 2(%rsi)
  jne 2f
  cmpb $0x76, 3(%rsi)
  jne 2f
  cmpb $0x4a, 4(%rsi)
  jne 2f
  jmp nvrtc_cache_dlsym_nvrtc
2:
  movq nvrtc_cache_real_dlsym_ptr(%rip), %rax
  testq %rax, %rax
  jz 3f
  jmp *%rax
3:
  pushq %rdi
  .cfi_adjust_cfa_offset 8
  pushq %rsi
  .cfi_adjust_cfa_offset 8
  subq $8, %rsp
  .cfi_adjust_cfa_offset 8
  call nvrtc_cache_resolve_real_dlsym
  addq $8, %rsp
  .cfi_adjust_cfa_offset -8
  popq %rsi
  .cfi_adjust_cfa_offset -8
  popq %rdi
  .cfi_adjust_cfa_offset -8
  testq %rax, %rax
  jz 4f
  jmp *%rax
4:
  xorl %eax, %eax
  ret
  .cfi_endproc
  .size nvrtc_cache_dlsym, .-nvrtc_cache_dlsym
  .size nvrtc_cache_dlsym_compat, .-nvrtc_cache_dlsym_compat
  .section .note.GNU-stack,"",@progbits
