// The fault guard (platform/fault_guard.h) on Windows. A read of a mapped page that fails
// (EXCEPTION_IN_PAGE_ERROR: the disk or network under the file failed) or that LMDB makes through
// a damaged page number (EXCEPTION_ACCESS_VIOLATION) raises a structured exception; a vectored
// handler, installed once, sends a thread that is inside a guarded call back to run_guarded()
// (the faulting context is redirected to a function that __builtin_longjmp()s to the guarded
// call's frame, so the jump is made outside the exception dispatch) and passes every other
// exception on (EXCEPTION_CONTINUE_SEARCH), so crashes elsewhere stay as they were. There is no
// fork on Windows, so no fork order.
#include <windows.h>

#include <atomic>

#include "platform/fault_guard.h"

namespace nvrtc_cache::platform {
namespace {

// The jump buffer of this thread's innermost guarded call (__builtin_setjmp's five words).
thread_local void** t_jump = nullptr;
// Where a faulting guarded call resumes: set by the handler for its thread, read once here.
thread_local void** t_resume = nullptr;

[[noreturn]] void resume_after_fault() {
  void** jump = t_resume;
  t_resume = nullptr;
  __builtin_longjmp(jump, 1);
}

LONG CALLBACK on_exception(EXCEPTION_POINTERS* exception) {
  const DWORD code = exception->ExceptionRecord->ExceptionCode;
  if (code != EXCEPTION_IN_PAGE_ERROR && code != EXCEPTION_ACCESS_VIOLATION) return EXCEPTION_CONTINUE_SEARCH;
  void** jump = t_jump;
  if (jump == nullptr) return EXCEPTION_CONTINUE_SEARCH;
  t_jump = nullptr;
  t_resume = jump;
  CONTEXT* context = exception->ContextRecord;
  // A call's entry: the stack 16-byte aligned, less the return address it would have pushed.
  context->Rsp = ((context->Rsp - 256) & ~static_cast<DWORD64>(15)) - 8;
  context->Rip = reinterpret_cast<DWORD64>(&resume_after_fault);
  return EXCEPTION_CONTINUE_EXECUTION;
}

std::atomic<bool> g_fault_handlers_installed{false};

void install_once() {
  if (g_fault_handlers_installed.exchange(true, std::memory_order_acq_rel)) return;
  AddVectoredExceptionHandler(1, &on_exception);
}

}  // namespace

bool run_guarded(void (*fn)(void*), void* arg) {
  install_once();
  void* jump[5];
  void** const outer = t_jump;  // guarded calls may nest
  if (__builtin_setjmp(jump) != 0) {
    t_jump = outer;
    return false;
  }
  t_jump = jump;
  fn(arg);
  t_jump = outer;
  return true;
}

void escape_if_guarded() {
  if (void** jump = t_jump) {
    t_jump = nullptr;
    __builtin_longjmp(jump, 1);
  }
}

bool watch_mapping(void*, std::size_t, void (*)()) { return true; }
void unwatch_mapping(void*) {}

}  // namespace nvrtc_cache::platform
