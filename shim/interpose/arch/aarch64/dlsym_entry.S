// dlsym for aarch64 (shim/interpose/dlsym_hook.cc), exported as dlsym@@GLIBC_2.34 and dlsym@GLIBC_2.17:
// a name starting with "nvrtc", "nvJ" or "__nvJ" (nvJitLink's) or "nvvm" (libNVVM's) on a handle other than RTLD_NEXT goes to
// nvrtc_cache_dlsym_nvrtc; every
// other lookup is a tail branch to glibc's dlsym with x30 untouched, so glibc still sees the original
// caller. Uses only x9 and x10 (scratch) before the tail branch.
  .text
  .globl nvrtc_cache_dlsym
  .type nvrtc_cache_dlsym, %function
  .symver nvrtc_cache_dlsym, dlsym@@GLIBC_2.34
  .globl nvrtc_cache_dlsym_compat
  .type nvrtc_cache_dlsym_compat, %function
  .symver nvrtc_cache_dlsym_compat, dlsym@GLIBC_2.17
  .p2align 2
nvrtc_cache_dlsym:
nvrtc_cache_dlsym_compat:
  .cfi_startproc
  cmn x0, #1
  b.eq 2f
  cbz x1, 2f
  ldrb w9, [x1]
  cmp w9, #0x5f
  b.eq 5f
  cmp w9, #0x6e
  b.ne 2f
  ldrb w9, [x1, #1]
  cmp w9, #0x76
  b.ne 2f
  ldrb w9, [x1, #2]
  cmp w9, #0x4a
  b.eq 6f
  cmp w9, #0x76
  b.ne 7f
  ldrb w9, [x1, #3]
  cmp w9, #0x6d
  b.eq 6f
  b 2f
7:
  cmp w9, #0x72
  b.ne 2f
  ldrb w9, [x1, #3]
  cmp w9, #0x74
  b.ne 2f
  ldrb w9, [x1, #4]
  cmp w9, #0x63
  b.ne 2f
6:
  b nvrtc_cache_dlsym_nvrtc
5:
  ldrb w9, [x1, #1]
  cmp w9, #0x5f
  b.ne 2f
  ldrb w9, [x1, #2]
  cmp w9, #0x6e
  b.ne 2f
  ldrb w9, [x1, #3]
  cmp w9, #0x76
  b.ne 2f
  ldrb w9, [x1, #4]
  cmp w9, #0x4a
  b.ne 2f
  b nvrtc_cache_dlsym_nvrtc
2:
  adrp x10, nvrtc_cache_real_dlsym_ptr
  add x10, x10, :lo12:nvrtc_cache_real_dlsym_ptr
  ldar x9, [x10]
  cbz x9, 3f
  br x9
3:
  stp x29, x30, [sp, #-32]!
  .cfi_def_cfa_offset 32
  .cfi_offset x29, -32
  .cfi_offset x30, -24
  mov x29, sp
  stp x0, x1, [sp, #16]
  bl nvrtc_cache_resolve_real_dlsym
  mov x9, x0
  ldp x0, x1, [sp, #16]
  ldp x29, x30, [sp], #32
  .cfi_restore x29
  .cfi_restore x30
  .cfi_def_cfa_offset 0
  cbz x9, 4f
  br x9
4:
  mov x0, #0
  ret
  .cfi_endproc
  .size nvrtc_cache_dlsym, .-nvrtc_cache_dlsym
  .size nvrtc_cache_dlsym_compat, .-nvrtc_cache_dlsym_compat
  .section .note.GNU-stack,"",%progbits
