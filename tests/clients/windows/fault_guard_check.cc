// The Windows fault guard (platform/fault_guard_windows.cc) under Wine, for tests/integration/wine_test.cc: a
// guarded call that reads an unmapped address, or that meets an in-page error (raised here as the
// system raises it for a failed read of a mapped file), returns false and the program goes on; a
// sound call returns true; calls nest; escape_if_guarded leaves a guarded call as a fault would;
// the thread's last-error value is kept. Prints one line per check.
#include <windows.h>

#include <cstdio>

#include "platform/fault_guard.h"

namespace guard = nvrtc_cache::platform;

namespace {

int g_reached = 0;
volatile const int* g_unmapped = nullptr;  // reserved, never committed: reading it faults

void read_unmapped(void*) {
  g_reached += *g_unmapped;
  g_reached += 1000;  // never reached
}

void in_page_error(void*) {
  const ULONG_PTR info[3] = {0, 0x1000, static_cast<ULONG_PTR>(0xC000009CL)};  // STATUS_DEVICE_DATA_ERROR
  RaiseException(EXCEPTION_IN_PAGE_ERROR, 0, 3, info);
  g_reached += 1000;
}

void sound(void*) { g_reached += 1; }

void escapes(void*) {
  guard::escape_if_guarded();
  g_reached += 1000;
}

void nested(void* result) {
  *static_cast<bool*>(result) = guard::run_guarded(&read_unmapped, nullptr);
  g_reached += 1;  // the outer call goes on after the inner one faulted
}

}  // namespace

int main() {
  g_unmapped = static_cast<volatile const int*>(VirtualAlloc(nullptr, 1 << 16, MEM_RESERVE, PAGE_NOACCESS));
  if (g_unmapped == nullptr) return 2;
  std::printf("unmapped=%d\n", guard::run_guarded(&read_unmapped, nullptr) ? 1 : 0);
  std::printf("unmapped_again=%d\n", guard::run_guarded(&read_unmapped, nullptr) ? 1 : 0);
  std::printf("in_page=%d\n", guard::run_guarded(&in_page_error, nullptr) ? 1 : 0);
  std::printf("sound=%d\n", guard::run_guarded(&sound, nullptr) ? 1 : 0);
  std::printf("escaped=%d\n", guard::run_guarded(&escapes, nullptr) ? 1 : 0);
  bool inner = true;
  const bool outer = guard::run_guarded(&nested, &inner);
  std::printf("nested inner=%d outer=%d\n", inner ? 1 : 0, outer ? 1 : 0);
  guard::escape_if_guarded();  // outside a guarded call: returns
  SetLastError(1234);
  (void)guard::run_guarded(&read_unmapped, nullptr);
  std::printf("last_error=%lu\n", static_cast<unsigned long>(GetLastError()));
  std::printf("reached=%d\n", g_reached);
  return 0;
}
