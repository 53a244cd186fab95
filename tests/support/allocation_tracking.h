// Test support: the largest single allocation (operator new) a piece of code makes, to show that a
// decoder never allocates more than its input justifies. Contract: test-only; replaces the global
// operator new/delete of the test binary that links it; per thread.
#pragma once

#include <cstddef>
#include <functional>

namespace nvrtc_cache::testing {

std::size_t largest_allocation_during(const std::function<void()>& run);

}  // namespace nvrtc_cache::testing
