// Transfer: the two ends of `nvrtc-cache export`, `import` and `copy`. An endpoint is the local
// store (the cache directory of NVRTC_CACHE_DIR / config) or any shared-tier URL (file://,
// redis://, see store/remote/tier.h); walking one yields the local store's (key, payload) pairs,
// writing one merges into it. Copying between two tiers is one walk into one merge, whichever
// the two are, with or without an archive in between.
// Merge rule: an entry already present is kept (results are content-addressed: the same key is
// the same compile); a manifest present on both sides is merged (the destination's results first,
// then the ones it lacks, newest first, at most direct::kMaxResultsPerManifest).
// Contract: single-threaded; never throws except std::bad_alloc; a tier is used with a generous
// per-operation deadline (an export is not a compile: it may wait).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "store/lmdb/lmdb_store.h"
#include "store/remote/secret.h"
#include "store/remote/tier.h"

namespace nvrtc_cache::tools {

struct WalkedEntry {
  std::string_view key;      // 'M' or 'R' and 32 bytes
  std::string_view payload;  // the local store's value
  std::int64_t created = 0;  // Unix seconds, 0 unknown
  std::int64_t last_used = 0;
};

struct WalkCounts {
  std::uint64_t visited = 0;
  std::uint64_t damaged = 0;       // failed the store's envelope or the tier's seal
  std::uint64_t mac_rejected = 0;  // a tier value not signed with the secret
};

enum class MergeOutcome { kAdded, kMerged, kPresent, kMalformed, kFailed };

class Endpoint {
 public:
  // `url` empty: the local store. `secret` (may be null) signs what is written to a tier and is
  // required of what is read from one; it must outlive the endpoint.
  static std::unique_ptr<Endpoint> open(const std::string& url, const store::remote::Secret* secret,
                                        std::string* problem);
  const std::string& name() const { return name_; }
  // Entries to expect (the local store's count; 0 for a tier: unknown).
  std::uint64_t expected_entries();

  // Visits every manifest and result in the store (keys of any other shape are skipped).
  bool walk(const std::function<void(const WalkedEntry&)>& visit, WalkCounts* counts, std::string* problem);
  // Merges one entry (see the merge rule); a payload that does not decode as its kind is kMalformed
  // and nothing is written. *problem says why on kFailed.
  MergeOutcome merge(std::string_view key, std::string_view payload, std::string* problem);

 private:
  std::optional<std::string> get(std::string_view key);
  bool put(std::string_view key, std::string_view payload, std::string* problem);

  std::string name_;
  std::unique_ptr<store::LmdbStore> local_;
  std::unique_ptr<store::remote::Tier> tier_;
  const store::remote::Secret* secret_ = nullptr;
};

// The names a result entry answers to: the program name it records, then the name `ls` shows for it
// (program_label: what the program defines when its name says nothing); {""} when it records none or
// does not decode.
std::vector<std::string> program_names_of(std::string_view result_payload);

}  // namespace nvrtc_cache::tools
