#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include "core/config.h"
#include "core/stats.h"
#include "store/cache_directory.h"
#include "tools/commands.h"
#include "tools/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

std::unique_ptr<store::LmdbStore> open_store(const core::Config& config) {
  return std::move(open_cache_reporting(config).store);
}

void print_json_string(std::string_view text) {
  std::putchar('"');
  for (const char c : text) {
    if (c == '"' || c == '\\') std::printf("\\%c", c);
    else if (static_cast<unsigned char>(c) < 0x20) std::printf("\\u%04x", c);
    else std::putchar(c);
  }
  std::putchar('"');
}

std::int64_t counter(const store::Counters& counters, std::string_view name) {
  auto it = counters.find(name);
  return it == counters.end() ? 0 : it->second;
}

}  // namespace

int stats_command(int argc, char** argv) {
  const bool json = argc > 0 && std::strcmp(argv[0], "--json") == 0;
  const core::Config config = core::config_from_process_environment();
  store::OpenedCache opened = open_cache_reporting(config);
  const std::unique_ptr<store::LmdbStore>& s = opened.store;
  if (!s) return 1;
  const std::size_t moved_aside = store::moved_aside_stores(opened.directory);
  const store::Counters counters = s->counters();
  const std::uint64_t entries = s->entry_count();
  const std::uint64_t bytes = s->size_bytes();
  const double saved_seconds = static_cast<double>(counter(counters, "saved_ns")) / 1e9;
  if (json) {
    std::printf("{\"directory\": ");
    print_json_string(opened.directory);
    for (std::string_view name : core::kCounterNames) {
      std::printf(", \"%.*s\": %" PRId64, static_cast<int>(name.size()), name.data(), counter(counters, name));
    }
    std::printf(", \"entries\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"max_bytes\": %" PRIu64
                ", \"saved_seconds\": %.6f, \"moved_aside_stores\": %zu}\n",
                entries, bytes, config.max_size_bytes, saved_seconds, moved_aside);
    return 0;
  }
  const std::int64_t hits = counter(counters, "hits");
  const std::int64_t lookups = hits + counter(counters, "misses");
  std::printf("cache directory   %s\n", opened.directory.c_str());
  std::printf("hits              %" PRId64 "\n", hits);
  std::printf("misses            %" PRId64 "\n", counter(counters, "misses"));
  std::printf("hit rate          %.1f%%\n", lookups ? 100.0 * static_cast<double>(hits) / static_cast<double>(lookups) : 0.0);
  std::printf("uncacheable       %" PRId64 "\n", counter(counters, "uncacheable"));
  std::printf("stores            %" PRId64 "\n", counter(counters, "stores"));
  std::printf("errors            %" PRId64 "\n", counter(counters, "errors"));
  std::printf("corrupt dropped   %" PRId64 "\n", counter(counters, "corrupt"));
  std::printf("entries           %" PRIu64 "\n", entries);
  std::printf("size              %.2f MiB of %.2f MiB\n", static_cast<double>(bytes) / 1048576.0,
              static_cast<double>(config.max_size_bytes) / 1048576.0);
  std::printf("time saved        %.3f s\n", saved_seconds);
  std::printf("moved aside       %zu damaged stores (the newest %zu are kept)\n", moved_aside, store::kMovedAsideKept);
  std::printf("waited            %" PRId64 " compiles, %.3f s (for another compile of the same program)\n",
              counter(counters, "waited"), static_cast<double>(counter(counters, "wait_ns")) / 1e9);
  return 0;
}

int clear_command(int, char**) {
  const core::Config config = core::config_from_process_environment();
  auto s = open_store(config);
  if (!s) return 1;
  const store::Status status = s->clear();
  if (!status) {
    std::fprintf(stderr, "nvrtc-cache: clear failed: %s\n", status.message().c_str());
    return 1;
  }
  std::printf("cleared %s\n", config.cache_dir.c_str());
  return 0;
}

}  // namespace nvrtc_cache::tools
