// The shim's dlsym: JIT stacks that dlopen NVRTC and look its functions up with dlsym(handle, ...)
// get wrappers bound to the library behind the handle (shim/interpose/slot_wrappers.h); every other lookup,
// and every RTLD_NEXT lookup, is a tail jump to glibc's dlsym, so glibc still sees the original caller (RTLD_NEXT and
// RTLD_DEFAULT keep their meaning, and a second preloaded library's dlsym(RTLD_NEXT, ...) cannot
// recurse). The fast path allocates nothing and takes no lock.
#include <dlfcn.h>

#include <atomic>

#include "shim/interpose/real_nvrtc.h"
#include "shim/interpose/slot_wrappers.h"

using DlsymFn = void* (*)(void*, const char*);

extern "C" {
__attribute__((visibility("hidden"), used)) void* nvrtc_cache_real_dlsym_ptr = nullptr;

__attribute__((visibility("hidden"), used)) void* nvrtc_cache_resolve_real_dlsym() {
  void* fn = __atomic_load_n(&nvrtc_cache_real_dlsym_ptr, __ATOMIC_ACQUIRE);
  if (fn) return fn;
  fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (fn == nullptr) fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  __atomic_store_n(&nvrtc_cache_real_dlsym_ptr, fn, __ATOMIC_RELEASE);
  return fn;
}

// Reached by a jump from dlsym below for names starting with "nvrtc": the return address is still
// the client's.
__attribute__((visibility("hidden"), used)) void* nvrtc_cache_dlsym_nvrtc(void* handle, const char* name) {
  using namespace nvrtc_cache::shim::interpose;
  // RTLD_DEFAULT: answer as glibc would without the shim (search after it), so a process that has
  // not loaded NVRTC does not find the shim's exports.
  void* found = real_dlsym(handle == RTLD_DEFAULT ? RTLD_NEXT : handle, name);
  if (found == nullptr || address_in_shim(found)) return found;
  const int slot = slot_for_function(found);
  if (slot < 0) return found;
  void* wrapper = slot_wrapper(slot, name);
  return wrapper ? wrapper : found;
}
}

__attribute__((constructor(101))) static void resolve_real_dlsym_at_load() { nvrtc_cache_resolve_real_dlsym(); }

namespace nvrtc_cache::shim::interpose {

void* real_dlsym(void* handle, const char* name) {
  auto fn = reinterpret_cast<DlsymFn>(nvrtc_cache_resolve_real_dlsym());
  return fn ? fn(handle, name) : nullptr;
}

}  // namespace nvrtc_cache::shim::interpose

asm(R"(
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
  cmpb $0x6e, 0(%rsi)
  jne 2f
  cmpb $0x76, 1(%rsi)
  jne 2f
  cmpb $0x72, 2(%rsi)
  jne 2f
  cmpb $0x74, 3(%rsi)
  jne 2f
  cmpb $0x63, 4(%rsi)
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
)");
