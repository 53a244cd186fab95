#include "shim/lifecycle/through_cache.h"

#include <algorithm>

namespace nvrtc_cache::shim {

void count_hit(core::StatsDeltas& stats, core::JitLibrary library, const HitTimes& times, std::int64_t call_nanos) {
  const core::LibraryCounters counters = core::counters_of(library);
  stats.add(counters.hits);
  stats.add(counters.hit_keying_ns, nanos_between(times.started, times.keyed));
  stats.add(counters.hit_lookup_ns,
            std::max<std::int64_t>(0, nanos_between(times.keyed, times.looked_up) - times.validate_ns - times.wait_ns));
  stats.add(counters.hit_validate_ns, times.validate_ns);
  stats.add(counters.saved_ns,
            std::max<std::int64_t>(0, call_nanos - nanos_between(times.started, SteadyClock::now())));
}

}  // namespace nvrtc_cache::shim
