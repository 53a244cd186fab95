// Doctor's report: one line per check, in plain words, and whether anything blocks caching.
// Contract: single-threaded; printing happens as checks are added (stdout).
#pragma once

#include <string>

#include "core/config.h"

namespace nvrtc_cache::tools {

enum class Severity { kOk, kNote, kWarn, kFail };

class DoctorReport {
 public:
  // `topic` is a short name ("shim", "cache directory"); `text` says what was found and, when not
  // ok, what to do.
  void add(Severity severity, const std::string& topic, const std::string& text);
  int failures() const { return failures_; }
  int warnings() const { return warnings_; }

 private:
  int failures_ = 0;
  int warnings_ = 0;
};

// Shared tiers: whether each configured tier (config.remote) is reachable and its secret usable.
// The hook the shared-tier code fills in (tools/doctor_tiers.cc).
void check_tiers(const core::Config& config, DoctorReport& report);

}  // namespace nvrtc_cache::tools
