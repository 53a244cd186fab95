#include "tests/support/allocation_tracking.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace {
thread_local bool g_tracking = false;
thread_local std::size_t g_largest_allocation = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (g_tracking) g_largest_allocation = std::max(g_largest_allocation, n);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace nvrtc_cache::testing {

std::size_t largest_allocation_during(const std::function<void()>& run) {
  g_largest_allocation = 0;
  g_tracking = true;
  run();
  g_tracking = false;
  return g_largest_allocation;
}

}  // namespace nvrtc_cache::testing
