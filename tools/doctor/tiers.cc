// `nvrtc-cache doctor`'s shared-tier check: the round trip of `nvrtc-cache remote check` for each
// configured tier. A tier that fails is a warning, not a failure: the local cache works without it;
// so is a tier whose values no secret signs (anyone who can write to it decides what is served).
#include <fmt/format.h>

#include "store/remote/tier_set.h"
#include "tools/doctor/doctor.h"

namespace nvrtc_cache::tools {

void check_tiers(const core::Config& config, DoctorReport& report) {
  if (config.remote.empty()) {
    report.add(Severity::kOk, "shared tiers", "none configured (remote)");
    return;
  }
  std::vector<std::string> problems;
  const auto checks = store::remote::check_tiers(config.remote, config.remote_secret_file, &problems);
  for (const std::string& problem : problems) {
    report.add(Severity::kWarn, "shared tiers", problem + "; the local cache works without it");
  }
  for (const store::remote::TierCheck& check : checks) {
    const std::string timing = fmt::format("{:.1f} ms round trip", check.round_trip_ms);
    if (!check.reachable) {
      report.add(Severity::kWarn, "shared tier",
                 check.name + " is unreachable: " + check.message + "; compiles fall back to the local cache " +
                     "(`nvrtc-cache remote check` to retry)");
    } else if (check.writable) {
      report.add(Severity::kOk, "shared tier", check.name + " reachable and writable, " + timing);
    } else if (check.message == "read-only") {
      report.add(Severity::kOk, "shared tier", check.name + " reachable, read-only, " + timing);
    } else {
      report.add(Severity::kWarn, "shared tier", check.name + " reachable but refused: " + check.message);
    }
    if (!check.signed_values) {
      report.add(Severity::kWarn, "shared tier",
                 check.name + " is unsigned: whoever can write to it decides what compiles return here; set " +
                     "remote_secret_file to a secret shared by the trusted nodes (head -c 32 /dev/urandom > FILE)");
    }
  }
}

}  // namespace nvrtc_cache::tools
