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

namespace {

bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace

Counter uncacheable_reason(std::string_view why) {
  if (has(why, "__TIME__")) return Counter::uncacheable_time;
  if (has(why, "has side effects")) return Counter::uncacheable_side_effect_option;
  if (has(why, "flow callback")) return Counter::uncacheable_flow_callback;
  if (has(why, "could not be captured") || has(why, "option list") || has(why, "NULL option")) {
    return Counter::uncacheable_inputs;
  }
  if (has(why, "modified during the compile") || has(why, "changed while being fingerprinted") ||
      has(why, "vanished after the compile") || has(why, "vanished during the compile") ||
      has(why, "working directory moved")) {
    return Counter::uncacheable_file_modified;
  }
  if (has(why, "NVRTC wrote") || has(why, "listed") || has(why, "write")) {
    return Counter::uncacheable_wrote_file;
  }
  if (has(why, "not observable")) return Counter::uncacheable_unobservable;
  if (has(why, "NVRTC returned")) return Counter::uncacheable_nvrtc_error;
  if (has(why, "read back exactly")) return Counter::uncacheable_output;
  if (has(why, "capture") || has(why, "thread") || has(why, "program") || has(why, "directory") ||
      has(why, "signal") || has(why, "user database") || has(why, "NVRTC read")) {
    return Counter::uncacheable_unwatchable;
  }
  return Counter::uncacheable_other;
}

Counter miss_reason(std::string_view why) {
  if (why == "no manifest") return Counter::miss_new;
  if (has(why, "environment variable")) return Counter::miss_environment;
  if (has(why, "(__DATE__)")) return Counter::miss_date;
  if (has(why, "lacks an output")) return Counter::miss_outputs;
  if (has(why, "gone from the store") || has(why, "corrupt") || has(why, "no result")) {
    return Counter::miss_result_gone;
  }
  if (has(why, " changed") || has(why, " appeared") || has(why, " vanished") || has(why, " elsewhere") ||
      has(why, "not a file to read")) {
    return Counter::miss_dependency;
  }
  return Counter::miss_other;
}

}  // namespace nvrtc_cache::core
