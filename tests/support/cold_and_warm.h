// Test helpers for the clients of the handle-based libraries (tests/integration/nvjitlink_test.cc,
// nvvm_test.cc): a program run directly, then under the shim cold, then warm, each in its own
// process, with the cache's counters after each shim run. Contract: test-only; blocking.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {

struct ColdAndWarm {
  ProcessResult direct, cold, warm;
  store::Counters after_cold, after_warm;
};

// `argv` directly with `extra`, then under the shim (cache in `cache`) twice.
inline ColdAndWarm cold_and_warm(const std::vector<std::string>& argv, const std::string& cache, EnvVars extra = {}) {
  ColdAndWarm r;
  r.direct = run_process(argv, extra);
  EnvVars env = shim_env(cache);
  env.insert(extra.begin(), extra.end());
  r.cold = run_process(argv, env);
  r.after_cold = counters_of(cache);
  r.warm = run_process(argv, env);
  r.after_warm = counters_of(cache);
  return r;
}

// All three exited 0 and printed the same.
inline void expect_identical(const ColdAndWarm& r) {
  ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
  EXPECT_EQ(r.cold.exit_code, 0) << r.cold.err;
  EXPECT_EQ(r.warm.exit_code, 0) << r.warm.err;
  EXPECT_EQ(r.cold.out, r.direct.out);
  EXPECT_EQ(r.warm.out, r.direct.out);
}

// Whether the dynamic section of `path` needs a library whose name contains `name`.
inline bool needs_library(const std::string& path, const std::string& name) {
  for (const std::string& library : needed_libraries(path)) {
    if (library.find(name) != std::string::npos) return true;
  }
  return false;
}

}  // namespace nvrtc_cache::testing
