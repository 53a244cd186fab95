// nvrtc-cache evict [--max-size S] [--older-than D]: removes least recently used entries now.
// --max-size applies to the payload bytes the cache holds (the "size" `nvrtc-cache stats` shows),
// not to the data file: LMDB files never shrink, their freed pages are reused by later entries.
// With neither option the automatic policy runs: down to 60% map usage if above 75% of the cap.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "core/config.h"
#include "store/cache_directory.h"
#include "tools/commands.h"
#include "tools/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

// "30d", "12h", "90m", "3600s", "2w" or plain seconds -> seconds; nullopt when malformed.
std::optional<std::int64_t> parse_duration(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 12) return std::nullopt;
  const std::int64_t number = std::stoll(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  std::int64_t scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "m") scale = 60;
  else if (unit == "h") scale = 3600;
  else if (unit == "d") scale = 86400;
  else if (unit == "w") scale = 7 * 86400;
  else return std::nullopt;
  return number * scale;  // at most 10^12 weeks: no overflow
}

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

int usage_error(const char* message, const char* argument) {
  std::fprintf(stderr, "nvrtc-cache evict: %s '%s'\n", message, argument);
  std::fprintf(stderr, "usage: nvrtc-cache evict [--max-size SIZE] [--older-than AGE]\n"
                       "  SIZE like 2G, 500M (payload bytes kept at most); AGE like 30d, 12h, 90m, 3600s\n");
  return 2;
}

}  // namespace

int evict_command(int argc, char** argv) {
  store::EvictOptions options;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    } else if ((arg == "--max-size" || arg == "--older-than") && i + 1 < argc) {
      value = argv[++i];
    }
    if (arg == "--max-size") {
      const auto bytes = core::parse_size(value);
      if (!bytes) return usage_error("not a size (e.g. 2G, 500M):", value.c_str());
      options.max_bytes = *bytes;
    } else if (arg == "--older-than") {
      const auto seconds = parse_duration(value);
      if (!seconds) return usage_error("not an age (e.g. 30d, 12h, 90m, 3600s):", value.c_str());
      options.older_than_seconds = *seconds;
    } else {
      return usage_error("unknown argument", argv[i]);
    }
  }
  const core::Config config = core::config_from_process_environment();
  store::OpenedCache opened = open_cache_reporting(config);
  if (!opened.store) return 1;
  store::LmdbStore& cache = *opened.store;
  store::EvictResult result;
  const store::Status status = cache.evict(options, &result);
  std::printf("evicted %" PRIu64 " entries (%.2f MiB) from %s\n", result.entries, mib(result.bytes),
              opened.directory.c_str());
  const store::MapUsage usage = cache.map_usage();
  std::printf("now %" PRIu64 " entries, %.2f MiB of payload; %.2f MiB of the %.2f MiB map in use\n",
              cache.entry_count(), mib(cache.size_bytes()), mib(usage.used_bytes), mib(usage.map_bytes));
  if (!status) {
    std::fprintf(stderr, "nvrtc-cache: evict failed: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace nvrtc_cache::tools
