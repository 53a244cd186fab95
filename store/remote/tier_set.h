// Tier set: the shared tiers a NVRTC_CACHE_REMOTE setting names (URLs separated by white space, in
// the order they are consulted) and the secret of NVRTC_CACHE_REMOTE_SECRET_FILE; and the round-trip
// check `nvrtc-cache remote check` prints.
// A URL that does not parse, has a bad attribute or names a tier that cannot be built is skipped
// with one message (the others are used). A secret file that is set but cannot be read disables
// every shared tier (values would go unsigned and unchecked against the operator's intent).
// Contract: thread-safe, no global state; messages never hold a password or the secret.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/remote/secret.h"
#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote {

struct ConfiguredTier {
  std::unique_ptr<Tier> tier;
  TierOptions options;
};

struct TierSet {
  std::vector<ConfiguredTier> tiers;
  std::optional<Secret> secret;
  std::vector<std::string> problems;  // one line each, safe to log: what was not used, and why
  std::vector<std::string> warnings;  // the same, about what is used all the same (a secret others may read)
};

TierSet open_tiers(std::string_view remote, const std::string& secret_file);

// One tier's check for the CLI.
struct TierCheck {
  std::string name;  // display name (no password)
  bool reachable = false;
  double round_trip_ms = 0;
  bool writable = false;       // configured writable and the check wrote and read back
  std::string message;         // what failed, in plain words (empty when fine)
  bool signed_values = false;  // a secret signs and checks its values (remote_secret_file)
};

// Checks every configured tier (each within its `timeout`); *problems gets the URLs that were
// skipped.
std::vector<TierCheck> check_tiers(std::string_view remote, const std::string& secret_file,
                                   std::vector<std::string>* problems);

}  // namespace nvrtc_cache::store::remote
