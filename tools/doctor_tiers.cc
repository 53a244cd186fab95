// `nvrtc-cache doctor`'s shared-tier check. Until the shared tiers are built in, it says what is
// configured; the shared-tier code replaces the body with a reachability check of each tier.
#include "tools/doctor.h"

namespace nvrtc_cache::tools {

void check_tiers(const core::Config& config, DoctorReport& report) {
  if (config.remote.empty()) {
    report.add(Severity::kOk, "shared tiers", "none configured (remote)");
    return;
  }
  report.add(Severity::kNote, "shared tiers",
             "remote is set, but this build does not check shared tiers yet; the local cache works without them");
}

}  // namespace nvrtc_cache::tools
