// nvrtc-cache verify: reads every entry of the store, checks its envelope and its format (manifests
// and compile results), and that every result a manifest names is present. Changes nothing.
#include <cstdio>
#include <set>
#include <string>

#include "core/compile_entry.h"
#include "core/config.h"
#include "direct/manifest.h"
#include "store/cache_directory.h"
#include "tools/commands.h"
#include "tools/open_cache.h"
#include "tools/progress.h"

namespace nvrtc_cache::tools {

namespace {

int verify() {
  const core::Config config = core::config_from_process_environment();
  store::OpenedCache opened = open_cache_reporting(config);
  if (!opened.store) return 1;
  Progress progress("verifying", opened.store->entry_count());
  std::uint64_t entries = 0, damaged = 0, manifests = 0, bad_manifests = 0, results = 0, bad_results = 0, other = 0;
  std::set<std::string> present, referenced;
  const store::Status walked = opened.store->for_each([&](std::string_view key, std::optional<std::string_view> payload) {
    progress.update(++entries);
    present.emplace(key);
    if (!payload) {
      ++damaged;
      return;
    }
    if (key.size() == 33 && key[0] == 'M') {
      ++manifests;
      if (auto manifest = direct::decode_manifest(*payload)) {
        for (const auto& r : manifest->results) referenced.insert(direct::result_store_key(r.result_key));
      } else {
        ++bad_manifests;
      }
    } else if (key.size() == 33 && key[0] == 'R') {
      ++results;
      if (!core::decode_entry(*payload)) ++bad_results;
    } else {
      ++other;
    }
  });
  progress.finish();
  std::uint64_t dangling = 0;
  for (const auto& key : referenced) dangling += present.count(key) == 0;
  std::printf("cache directory     %s\n", opened.directory.c_str());
  std::printf("entries             %llu\n", static_cast<unsigned long long>(entries));
  std::printf("manifests           %llu (%llu malformed)\n", static_cast<unsigned long long>(manifests),
              static_cast<unsigned long long>(bad_manifests));
  std::printf("compile results     %llu (%llu malformed)\n", static_cast<unsigned long long>(results),
              static_cast<unsigned long long>(bad_results));
  std::printf("failed checksum     %llu\n", static_cast<unsigned long long>(damaged));
  std::printf("unknown keys        %llu\n", static_cast<unsigned long long>(other));
  std::printf("missing results     %llu (named by a manifest, evicted or never stored: a miss, not an error)\n",
              static_cast<unsigned long long>(dangling));
  const bool sound = walked.is_ok() && damaged == 0 && bad_manifests == 0 && bad_results == 0 && other == 0;
  if (!walked.is_ok()) std::printf("walk                failed: %s\n", walked.message().c_str());
  std::printf("verdict             %s\n", sound ? "ok" : "DAMAGED (damaged entries are misses; `nvrtc-cache clear` starts afresh)");
  return sound ? 0 : 1;
}

}  // namespace

void add_verify_command(CLI::App& app, Outcome& outcome) {
  CLI::App* verify_app = app.add_subcommand(
      "verify",
      "Read every entry and check its envelope, its format (manifests, compile results) and that the results "
      "manifests name are present. Changes nothing; exit status 1 if anything is damaged. Shows a progress bar "
      "on a terminal.");
  verify_app->callback([&outcome] { outcome.exit_code = verify(); });
}

}  // namespace nvrtc_cache::tools
