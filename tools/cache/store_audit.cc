#include "tools/cache/store_audit.h"

#include <cstdio>
#include <set>

#include "core/compile_entry.h"
#include "core/handle_entry.h"
#include "direct/manifest.h"

namespace nvrtc_cache::tools {

StoreAudit audit_store(store::LmdbStore& store, const std::function<void(std::uint64_t)>& on_entry) {
  StoreAudit a;
  std::set<std::string> present, referenced;
  a.walked = store.for_each([&](std::string_view key, std::optional<std::string_view> payload) {
    ++a.entries;
    if (on_entry) on_entry(a.entries);
    present.emplace(key);
    if (!payload) {
      ++a.damaged;
    } else if (key.size() == 33 && key[0] == 'M') {
      ++a.manifests;
      if (auto manifest = direct::decode_manifest(*payload)) {
        for (const auto& r : manifest->results) referenced.insert(std::string(keying::as_bytes(r.result_key)));
      } else {
        ++a.bad_manifests;
      }
    } else if (key.size() == 33 && key[0] == 'R') {
      ++a.results;
      if (!core::decode_entry(*payload)) ++a.bad_results;
    } else if (key.size() == 33 && key[0] == direct::kHandleResultPrefix) {
      ++a.handle_results;
      if (!core::decode_handle_entry(*payload)) ++a.bad_handle_results;
    } else if (key.size() == 33 && key[0] == direct::kApiEntryPrefix) {
      ++a.api_entries;  // a caller's value under a caller's key: opaque here
    } else if (key.size() == 33 && key[0] == direct::kWorkingDirectoryMarkerPrefix) {
      ++a.markers;  // a directory's path: any bytes are a hint, never served
    } else {
      ++a.other;
    }
  });
  // A manifest names a compile's result ('R') or a link's or libNVVM compile's ('L').
  for (const auto& key : referenced) {
    a.dangling +=
        present.count(direct::kResultPrefix + key) == 0 && present.count(direct::kHandleResultPrefix + key) == 0;
  }
  return a;
}

int print_audit(const std::string& directory, const StoreAudit& a) {
  const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("cache directory     %s\n", directory.c_str());
  std::printf("entries             %llu\n", n(a.entries));
  std::printf("manifests           %llu (%llu malformed)\n", n(a.manifests), n(a.bad_manifests));
  std::printf("compile results     %llu (%llu malformed)\n", n(a.results), n(a.bad_results));
  std::printf("link/NVVM results   %llu (%llu malformed)\n", n(a.handle_results), n(a.bad_handle_results));
  std::printf("C API entries       %llu\n", n(a.api_entries));
  std::printf("directory markers   %llu (where JIT-LTO compiles and links were stored from: miss.working_directory)\n",
              n(a.markers));
  std::printf("failed checksum     %llu\n", n(a.damaged));
  std::printf("unknown keys        %llu\n", n(a.other));
  std::printf("missing results     %llu (named by a manifest, evicted or never stored: a miss, not an error)\n",
              n(a.dangling));
  if (!a.walked.is_ok()) std::printf("walk                failed: %s\n", a.walked.message().c_str());
  std::printf("verdict             %s\n",
              a.sound() ? "ok" : "DAMAGED (damaged entries are misses; `nvrtc-cache clear` starts afresh)");
  return a.sound() ? 0 : 1;
}

}  // namespace nvrtc_cache::tools
