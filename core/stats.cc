#include "core/stats.h"

#include <string>

namespace nvrtc_cache::core {

store::Counters StatsDeltas::take() {
  store::Counters out;
  for (std::size_t i = 0; i < values_.size(); ++i) {
    const std::int64_t v = values_[i].exchange(0, std::memory_order_relaxed);
    if (v != 0) out.emplace(std::string(kCounterNames[i]), v);
  }
  return out;
}

}  // namespace nvrtc_cache::core
