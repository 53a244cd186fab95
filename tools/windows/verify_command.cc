// verify: reads every entry of the store, checks its envelope and its format (manifests, compile
// results) and that the results manifests name are present, as the Linux `nvrtc-cache verify`.
#include <cstdio>
#include <set>
#include <string>

#include "core/compile_entry.h"
#include "direct/manifest.h"
#include "tools/windows/commands.h"

namespace nvrtc_cache::tools::windows {

int verify() {
  std::string directory;
  auto s = open_store(&directory);
  if (!s) return 1;
  unsigned long long entries = 0, damaged = 0, manifests = 0, bad_manifests = 0, results = 0, bad_results = 0,
                     other = 0, dangling = 0;
  std::set<std::string> present, referenced;
  const store::Status walked = s->for_each([&](std::string_view key, std::optional<std::string_view> payload) {
    ++entries;
    present.emplace(key);
    if (!payload) {
      ++damaged;
    } else if (key.size() == 33 && key[0] == 'M') {
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
  for (const auto& key : referenced) dangling += present.count(key) == 0;
  std::printf("cache directory     %s\n", directory.c_str());
  std::printf("entries             %llu\n", entries);
  std::printf("manifests           %llu (%llu malformed)\n", manifests, bad_manifests);
  std::printf("compile results     %llu (%llu malformed)\n", results, bad_results);
  std::printf("failed checksum     %llu\n", damaged);
  std::printf("unknown keys        %llu\n", other);
  std::printf("missing results     %llu (named by a manifest, evicted or never stored: a miss, not an error)\n", dangling);
  const bool sound = walked.is_ok() && damaged == 0 && bad_manifests == 0 && bad_results == 0 && other == 0;
  if (!walked.is_ok()) std::printf("walk                failed: %s\n", walked.message().c_str());
  std::printf("verdict             %s\n", sound ? "ok" : "DAMAGED (damaged entries are misses; `nvrtc-cache clear` starts afresh)");
  return sound ? 0 : 1;
}

}  // namespace nvrtc_cache::tools::windows
