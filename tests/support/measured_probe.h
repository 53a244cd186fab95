// The probe's scenarios run under GNU time (/usr/bin/time): the run's result (stderr without
// time's line), its wall time and its peak resident memory, for the shim suites that bound what a
// hostile tier costs a whole process (tests/integration/shim_http_tier_test.cc,
// shim_redis_cluster_test.cc).
// Contract: test-only, header-only, Linux; needs the harness (tests/support/harness.h) and the
// shim suites' NVRTC_PROBE_PATH; available() is false where GNU time is not installed.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/harness.h"

namespace nvrtc_cache::testing {

struct MeasuredRun {
  ProcessResult result;
  double seconds = 0;
  std::uint64_t peak_bytes = 0;

  static bool available() { return access("/usr/bin/time", X_OK) == 0; }
};

inline MeasuredRun measured_probe(const std::vector<std::string>& scenarios, EnvVars env) {
  std::vector<std::string> argv = {"/usr/bin/time", "-f", "nvrtc-cache-test-time %e %M", NVRTC_PROBE_PATH};
  argv.insert(argv.end(), scenarios.begin(), scenarios.end());
  env.try_emplace("PROBE_INCLUDE_DIR", kIncludeDir);
  MeasuredRun m;
  m.result = run_process(argv, env);
  const auto at = m.result.err.rfind("nvrtc-cache-test-time ");
  if (at != std::string::npos) {
    double kib = 0;
    std::sscanf(m.result.err.c_str() + at, "nvrtc-cache-test-time %lf %lf", &m.seconds, &kib);
    m.peak_bytes = static_cast<std::uint64_t>(kib) * 1024;
    m.result.err.erase(at);
  }
  return m;
}

}  // namespace nvrtc_cache::testing
