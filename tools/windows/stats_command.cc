// stats [--json], clear: the store's counters and totals (as the Linux `nvrtc-cache stats`, less
// its tiers and top programs), and emptying the store.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

#include "core/stats.h"
#include "tools/windows/commands.h"

namespace nvrtc_cache::tools::windows {
namespace {

constexpr int kStatsSchemaVersion = 1;

std::int64_t counter(const store::Counters& counters, std::string_view name) {
  auto it = counters.find(name);
  return it == counters.end() ? 0 : it->second;
}

}  // namespace

int stats(bool json) {
  std::string directory;
  auto s = open_store(&directory);
  if (!s) return 1;
  const store::Counters counters = s->counters();
  const std::int64_t hits = counter(counters, "hits");
  const std::int64_t lookups = hits + counter(counters, "misses");
  const double hit_rate = lookups ? static_cast<double>(hits) / static_cast<double>(lookups) : 0.0;
  if (json) {
    nlohmann::ordered_json j;
    j["schema_version"] = kStatsSchemaVersion;
    j["directory"] = directory;
    for (std::string_view name : core::kCounterNames) {
      if (name.find('.') == std::string_view::npos) j[std::string(name)] = counter(counters, name);
    }
    const store::MapUsage usage = s->map_usage();
    j["entries"] = s->entry_count();
    j["bytes"] = s->size_bytes();
    j["map_bytes"] = usage.map_bytes;  // max_size: the cap
    j["map_used_bytes"] = usage.used_bytes;
    j["hit_rate"] = hit_rate;
    j["saved_seconds"] = static_cast<double>(counter(counters, "saved_ns")) / 1e9;
    j["counters"] = counters;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("cache directory  %s\n", directory.c_str());
  const store::MapUsage usage = s->map_usage();
  std::printf("entries          %llu (%llu bytes)\n", static_cast<unsigned long long>(s->entry_count()),
              static_cast<unsigned long long>(s->size_bytes()));
  std::printf("store            %llu of %llu bytes in use (max_size)\n",
              static_cast<unsigned long long>(usage.used_bytes), static_cast<unsigned long long>(usage.map_bytes));
  for (std::size_t i = 0; i < core::kCounterNames.size(); ++i) {
    std::printf("%-32s %lld  %s\n", std::string(core::kCounterNames[i]).c_str(),
                static_cast<long long>(counter(counters, core::kCounterNames[i])),
                std::string(core::kCounterHelp[i]).c_str());
  }
  std::printf("hit rate         %.1f%%\n", hit_rate * 100);
  return 0;
}

int clear() {
  std::string directory;
  auto s = open_store(&directory);
  if (!s) return 1;
  const store::Status status = s->clear();
  if (!status) {
    std::fprintf(stderr, "nvrtc-cache: clear failed: %s\n", status.message().c_str());
    return 1;
  }
  std::printf("cleared %s\n", directory.c_str());
  return 0;
}

}  // namespace nvrtc_cache::tools::windows
