#include "core/stats.h"

#include <string>

#include "store/counter_file.h"

namespace nvrtc_cache::core {

store::Counters StatsDeltas::take() {
  store::Counters out;
  for (std::size_t i = 0; i < values_.size(); ++i) {
    const std::int64_t v = values_[i].exchange(0, std::memory_order_relaxed);
    if (v != 0) out.emplace(std::string(kCounterNames[i]), v);
  }
  return out;
}

void StatsDeltas::attach(store::CounterFile& file) {
  for (std::size_t i = 0; i < values_.size(); ++i) {
    std::atomic<std::int64_t>* cell = file.cell(kCounterNames[i]);
    if (cell == nullptr) continue;
    cells_[i].store(cell, std::memory_order_release);
    if (const std::int64_t v = values_[i].exchange(0, std::memory_order_relaxed); v != 0) {
      cell->fetch_add(v, std::memory_order_relaxed);
    }
  }
}

}  // namespace nvrtc_cache::core
