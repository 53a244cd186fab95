// nvrtc-cache remote check [--json]: a round trip to every shared tier the `remote` setting names
// (each within its own timeout): reachable, round-trip time, writable or read-only, what failed.
// Exit status 1 when a tier is unreachable or refuses the check (wrong password, full), or a URL
// was skipped. Passwords never appear (tier display names mask them).
// nvrtc-cache remote evict URL --max-size S: trims a file:// tier to S bytes, oldest files first
// (Redis tiers are capped by the server's own maxmemory policy); a bucket that is a symbolic link or
// not the tier's own is skipped, never followed, and said once on stderr.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "store/remote/file_tier.h"
#include "store/remote/tier_set.h"
#include "tools/commands.h"
#include "tools/cache/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

// Fine: reachable, and writable unless the URL asked for read-only.
bool healthy(const store::remote::TierCheck& check) {
  return check.reachable && (check.writable || check.message == "read-only");
}

int remote_check(bool json) {
  const core::Config config = load_settings();
  std::vector<std::string> problems;
  const std::vector<store::remote::TierCheck> checks =
      store::remote::check_tiers(config.remote, config.remote_secret_file, &problems);
  bool all_healthy = problems.empty();
  for (const auto& check : checks) all_healthy = all_healthy && healthy(check);
  if (json) {
    nlohmann::json out;
    out["tiers"] = nlohmann::json::array();
    for (const auto& check : checks) {
      out["tiers"].push_back({{"name", check.name},
                              {"reachable", check.reachable},
                              {"round_trip_ms", check.round_trip_ms},
                              {"writable", check.writable},
                              {"ok", healthy(check)},
                              {"signed", check.signed_values},
                              {"message", check.message}});
    }
    out["problems"] = problems;
    out["ok"] = all_healthy;
    fmt::print("{}\n", out.dump(2));
    return all_healthy ? 0 : 1;
  }
  if (checks.empty() && problems.empty()) {
    fmt::print("no shared tiers configured (remote)\n");
    return 0;
  }
  for (const auto& check : checks) {
    fmt::print("{}\n", check.name);
    fmt::print("  reachable   {}\n", check.reachable ? "yes" : "no");
    fmt::print("  round trip  {:.1f} ms\n", check.round_trip_ms);
    fmt::print("  access      {}\n", check.writable                 ? "writable"
                                     : check.message == "read-only" ? "read-only"
                                                                    : "none (the check failed)");
    fmt::print("  values      {}\n",
               check.signed_values
                   ? "signed (remote_secret_file)"
                   : "unsigned: whoever can write to it decides what compiles return (set remote_secret_file)");
    if (!check.message.empty()) fmt::print("  message     {}\n", check.message);
  }
  for (const std::string& problem : problems) fmt::print(stderr, "nvrtc-cache: remote check: {}\n", problem);
  if (!all_healthy) fmt::print(stderr, "nvrtc-cache: remote check: a shared tier is not usable\n");
  return all_healthy ? 0 : 1;
}

int remote_evict(const CLI::App& command, const std::string& url, const std::string& max_size) {
  const auto bytes = core::parse_size(max_size);
  if (!bytes) return usage_error(command, "'" + max_size + "' is not a size (e.g. 2G, 500M, 4096B; no unit: GiB)");
  const store::remote::FileTierEviction result = store::remote::evict_file_tier(url, *bytes);
  if (!result.problem.empty()) {
    fmt::print(stderr, "nvrtc-cache: remote evict: {}\n", result.problem);
    return 1;
  }
  if (result.buckets_skipped > 0) {
    fmt::print(stderr, "nvrtc-cache: remote evict: skipped {} bucket {} (first: {})\n", result.buckets_skipped,
               result.buckets_skipped == 1 ? "directory" : "directories", result.first_skipped);
  }
  fmt::print("removed {} of {} files; {:.2f} MiB left (was {:.2f} MiB); {} abandoned temporary files removed\n",
             result.files_removed, result.files_before, static_cast<double>(result.bytes_after) / 1048576.0,
             static_cast<double>(result.bytes_before) / 1048576.0, result.temporaries_removed);
  return 0;
}

}  // namespace

void add_remote_command(CLI::App& app, Outcome& outcome) {
  CLI::App* remote = app.add_subcommand("remote", "Check or trim the shared tiers (the remote setting).");
  remote->require_subcommand(1);

  CLI::App* check = remote->add_subcommand(
      "check",
      "A round trip to every shared tier: reachable, round-trip time, writable or read-only, and what failed. "
      "Exit status 1 if a tier is unreachable or refuses (wrong password, full) or a URL is malformed.");
  auto json = std::make_shared<bool>(false);
  check->add_flag("--json", *json,
                  "print JSON: {tiers: [{name, reachable, round_trip_ms, writable, ok, message}], problems, ok}");
  check->callback([&outcome, json] { outcome.exit_code = remote_check(*json); });

  CLI::App* evict = remote->add_subcommand(
      "evict",
      "Trim a shared-directory tier (file:///DIR) to SIZE bytes, least recently written files first; also "
      "removes abandoned temporary files. Redis tiers are capped by the server's maxmemory policy.");
  auto url = std::make_shared<std::string>();
  auto max_size = std::make_shared<std::string>();
  evict->add_option("URL", *url, "the tier, file:///DIR")->required();
  evict->add_option("--max-size", *max_size, "keep at most SIZE bytes of entries (e.g. 20G, 500M; no unit: GiB)")
      ->required();
  evict->callback([&outcome, evict, url, max_size] { outcome.exit_code = remote_evict(*evict, *url, *max_size); });
}

}  // namespace nvrtc_cache::tools
