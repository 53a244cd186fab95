// nvrtc-cache evict [--max-size S] [--older-than D]: removes least recently used entries now.
// --max-size applies to the payload bytes the cache holds (the "size" `nvrtc-cache stats` shows),
// not to the data file: LMDB files never shrink, their freed pages are reused by later entries
// (--compact rewrites the file without them: tools/cache/compact.h).
// With neither option the automatic policy runs: down to 60% map usage if above 75% of the cap.
#include <cstdio>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/config.h"
#include "store/cache_directory.h"
#include "tools/commands.h"
#include "tools/cache/compact.h"
#include "tools/cache/entries.h"
#include "tools/cache/open_cache.h"
#include "tools/cache/progress.h"

namespace nvrtc_cache::tools {
namespace {

double in_mib(std::uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

struct EvictArguments {
  std::string max_size, older_than;
  bool compact = false;
};

int evict(const CLI::App& command, const EvictArguments& arguments) {
  store::EvictOptions options;
  if (!arguments.max_size.empty()) {
    const auto bytes = core::parse_size(arguments.max_size);
    if (!bytes) return usage_error(command, "'" + arguments.max_size + "' is not a size (e.g. 2G, 500M; no unit: GiB)");
    options.max_bytes = *bytes;
  }
  if (!arguments.older_than.empty()) {
    const auto seconds = parse_duration(arguments.older_than);
    if (!seconds) {
      return usage_error(command,
                         "'" + arguments.older_than + "' is not an age: a number and its unit (" + kAgeUnits + ")");
    }
    options.older_than_seconds = *seconds;
  }
  const core::Config config = load_settings();
  store::OpenedCache opened = open_cache_reporting(config);
  if (!opened.store) return 1;
  store::LmdbStore& cache = *opened.store;
  Progress progress("evicting", 0);
  store::EvictResult result;
  const store::Status status =
      cache.evict(options, &result, [&progress](std::uint64_t examined, std::uint64_t candidates) {
        progress.set_total(candidates);
        progress.update(examined);
      });
  progress.finish();
  fmt::print("evicted {} entries ({:.2f} MiB) from {}\n", result.entries, in_mib(result.bytes), opened.directory);
  const store::MapUsage usage = cache.map_usage();
  fmt::print("now {} entries, {:.2f} MiB of payload; {:.2f} MiB of the {:.2f} MiB map in use\n", cache.entry_count(),
             in_mib(cache.size_bytes()), in_mib(usage.used_bytes), in_mib(usage.map_bytes));
  if (!status) {
    fmt::print(stderr, "nvrtc-cache: evict failed: {}\n", status.message());
    return 1;
  }
  if (!arguments.compact) return 0;
  opened.store.reset();  // compaction needs the store closed in this process (tools/cache/compact.h)
  return report_compaction(compact_store(opened.directory + "/store"));
}

}  // namespace

void add_evict_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand(
      "evict",
      "Remove least-recently-used entries now: down to SIZE payload bytes, and/or every entry unused for AGE. "
      "With neither, trim to 60% of the cap (max_size) if above 75%. Shows a progress bar on a terminal.");
  auto arguments = std::make_shared<EvictArguments>();
  command->add_option("--max-size", arguments->max_size,
                      "keep at most SIZE payload bytes (e.g. 2G, 500M; no unit: GiB)");
  command->add_option("--older-than", arguments->older_than, "evict entries unused for AGE (30d, 12h, 90m, 3600s, 2w)");
  command->add_flag("--compact", arguments->compact, kCompactHelp);
  command->callback([&outcome, command, arguments] { outcome.exit_code = evict(*command, *arguments); });
}

}  // namespace nvrtc_cache::tools
