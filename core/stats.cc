#include "core/stats.h"

#include <string>

#include "core/log.h"

namespace nvrtc_cache::core {

store::Counters StatsDeltas::take() {
  store::Counters out;
  for (std::size_t i = 0; i < values_.size(); ++i) {
    const std::int64_t v = values_[i].exchange(0, std::memory_order_relaxed);
    if (v != 0) out.emplace(std::string(kCounterNames[i]), v);
  }
  return out;
}

void StatsDeltas::note_counting_stopped() {
  log_once(LogLevel::kWarn, "counters-file-fault",
           "the counters file could not be written (truncated by another process, or its filesystem is full): "
           "this process's counts go to the store's counters database from now on");
}

void StatsDeltas::attach(CounterFileSource source, void* context) {
  context_ = context;
  source_ = source;
  reattach();
}

void StatsDeltas::reattach() {
  if (reattaching_.exchange(true, std::memory_order_acquire)) return;
  const std::uint64_t generation = store::counter_file_generation();
  for (auto& cell : cells_) cell.store(nullptr, std::memory_order_release);  // count here meanwhile
  if (CounterFile* file = source_(context_)) {
    for (std::size_t i = 0; i < values_.size(); ++i) {
      std::atomic<std::int64_t>* cell = file->cell(kCounterNames[i]);
      if (cell == nullptr) continue;
      if (const std::int64_t v = values_[i].exchange(0, std::memory_order_relaxed); v != 0) {
        if (!CounterFile::add_to(cell, v)) {
          values_[i].fetch_add(v, std::memory_order_relaxed);
          note_counting_stopped();
          break;
        }
      }
      cells_[i].store(cell, std::memory_order_release);
    }
  }
  generation_.store(generation, std::memory_order_relaxed);
  reattaching_.store(false, std::memory_order_release);
}

}  // namespace nvrtc_cache::core
