// Integration-test harness: runs tests/nvrtc_probe directly or under the shim, and reads the
// cache's shared counters. Contract: test-only; each call is a separate process.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/process.h"

namespace nvrtc_cache::testing {

using EnvVars = std::map<std::string, std::optional<std::string>>;

inline const std::string kIncludeDir = std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/include";

// Runs the probe's scenarios; PROBE_INCLUDE_DIR defaults to tests/data/include.
ProcessResult probe(const std::vector<std::string>& scenarios, EnvVars env, const std::string& cwd = "");
// The environment that preloads the shim with its cache in `cache_dir`.
EnvVars shim_env(const std::string& cache_dir);
// For tests that need the PyPI packages (scripts/python_env.sh): skipped, saying why, when
// PyPI was unreachable; a failure where it must be reachable (NVRTC_CACHE_REQUIRE_PYPI=1, set by
// .ci/run).
#define NVRTC_CACHE_SKIP_WITHOUT_PYPI(message)                                  \
  do {                                                                           \
    if (::nvrtc_cache::testing::pypi_required()) FAIL() << "required: " << message; \
    GTEST_SKIP() << message;                                                     \
  } while (false)
bool pypi_required();

// The cache's counters (empty if there is no store yet).
store::Counters counters_of(const std::string& cache_dir);
std::int64_t get(const store::Counters& counters, const std::string& name);

}  // namespace nvrtc_cache::testing
