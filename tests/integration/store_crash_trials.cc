// store_crash_trials: SIGKILLs a child writer at random points, over and over, and reports whether
// the LMDB store lost or damaged anything (see tests/support/store_testing.h).
// usage: store_crash_trials [TRIALS] [--map-size BYTES] [--evicting] [--seed N] [--dir DIR]
//   TRIALS defaults to 200. --evicting uses an 8 MiB map, so the child also evicts while it is killed
//   (missing entries are then evictions, not losses). DIR defaults to a fresh directory under /tmp,
//   removed afterwards. Exit status 0 only when nothing was lost, damaged or crashed.
#include <stdlib.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "tests/support/store_testing.h"

int main(int argc, char** argv) {
  using namespace nvrtc_cache::store::testing;
  CrashTrialOptions options;
  options.trials = 200;
  std::string directory;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--map-size" && i + 1 < argc) {
      options.map_size_bytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--evicting") {
      options.map_size_bytes = 8ull << 20;
      options.expect_everything_kept = false;
    } else if (arg == "--seed" && i + 1 < argc) {
      options.seed = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else if (arg == "--dir" && i + 1 < argc) {
      directory = argv[++i];
    } else if (!arg.empty() && arg[0] != '-') {
      options.trials = std::atoi(arg.c_str());
    } else {
      std::fprintf(stderr, "usage: %s [TRIALS] [--map-size BYTES] [--evicting] [--seed N] [--dir DIR]\n", argv[0]);
      return 2;
    }
  }
  std::string temporary;
  if (directory.empty()) {
    char pattern[] = "/tmp/nvrtc_cache_crash_trials.XXXXXX";
    if (::mkdtemp(pattern) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    temporary = pattern;
    directory = temporary + "/store";
  }
  const CrashTrialReport report = run_crash_trials(directory, options);
  const Recount counted = recount(directory);
  std::printf("trials run                    %d\n", report.trials);
  std::printf("children killed (SIGKILL)     %d\n", report.killed);
  std::printf("puts reported committed       %" PRIu64 "\n", report.committed);
  std::printf("entries lost                  %" PRIu64 "\n", report.lost);
  if (!options.expect_everything_kept) std::printf("entries evicted               %" PRIu64 "\n", report.evicted);
  std::printf("wrong bytes                   %" PRIu64 "\n", report.wrong_bytes);
  std::printf("crashes other than SIGKILL    %d\n", report.other_crashes);
  std::printf("failed puts/read-backs        %d\n", report.put_failures);
  std::printf("store failed to open          %d\n", report.open_failures);
  std::printf("totals != recount (trials)    %d\n", report.totals_mismatches);
  std::printf("entries now / payload bytes   %" PRIu64 " / %" PRIu64 "\n", counted.entries, counted.payload_bytes);
  if (!report.first_problem.empty()) std::printf("first problem                 %s\n", report.first_problem.c_str());
  if (!temporary.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(temporary, ignored);
  }
  return report.trials == options.trials && report.clean() ? 0 : 1;
}
