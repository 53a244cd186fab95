#include "store/remote/tier_set.h"

namespace nvrtc_cache::store::remote {

TierSet open_tiers(std::string_view remote, const std::string& secret_file) {
  TierSet set;
  if (!secret_file.empty()) {
    std::string problem, warning;
    set.secret = read_secret_file(secret_file, &problem, &warning);
    if (!warning.empty()) set.warnings.push_back(warning);
    if (!set.secret) {
      set.problems.push_back(problem);
      return set;
    }
  }
  std::size_t pos = 0;
  while (pos < remote.size()) {
    const std::size_t start = remote.find_first_not_of(" \t\n", pos);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(remote.find_first_of(" \t\n", start), remote.size());
    pos = end;
    std::string problem;
    const std::optional<TierUrl> url = parse_tier_url(remote.substr(start, end - start), &problem);
    if (!url) {
      set.problems.push_back("NVRTC_CACHE_REMOTE: " + problem + "; skipped");
      continue;
    }
    ConfiguredTier configured;
    configured.options = tier_options(*url, &problem);
    if (!problem.empty()) {
      set.problems.push_back("NVRTC_CACHE_REMOTE: " + problem + "; skipped");
      continue;
    }
    configured.tier = make_tier(*url, configured.options, &problem);
    if (!configured.tier) {
      set.problems.push_back("NVRTC_CACHE_REMOTE: " + problem);
      continue;
    }
    set.tiers.push_back(std::move(configured));
  }
  return set;
}

std::vector<TierCheck> check_tiers(std::string_view remote, const std::string& secret_file,
                                   std::vector<std::string>* problems) {
  TierSet set = open_tiers(remote, secret_file);
  if (problems) {
    problems->insert(problems->end(), set.warnings.begin(), set.warnings.end());
    problems->insert(problems->end(), set.problems.begin(), set.problems.end());
  }
  std::vector<TierCheck> checks;
  for (ConfiguredTier& configured : set.tiers) {
    TierCheck check;
    check.name = configured.tier->display_name();
    check.signed_values = set.secret.has_value();
    const auto started = Clock::now();
    const TierResult r = configured.tier->check(started + configured.options.timeout);
    check.round_trip_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    check.reachable = r.ok() || r.code == TierCode::kRefused;
    check.writable = r.ok() && configured.tier->writable();
    if (!r.ok()) {
      check.message = r.code == TierCode::kTimeout ? "timed out (" + r.detail + ")" : r.detail;
    } else if (!configured.tier->writable()) {
      check.message = "read-only";
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

}  // namespace nvrtc_cache::store::remote
