// The counters file generation (store/counter_file.h), the same on every system.
#include "store/counter_file.h"

namespace nvrtc_cache::store {

namespace {
std::atomic<std::uint64_t> g_counter_file_generation{1};
}  // namespace

std::uint64_t counter_file_generation() { return g_counter_file_generation.load(std::memory_order_acquire); }
void note_counter_file_replaced() { g_counter_file_generation.fetch_add(1, std::memory_order_acq_rel); }

}  // namespace nvrtc_cache::store
