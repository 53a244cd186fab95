// Integration-test harness: runs tests/clients/nvrtc_probe directly or under the shim, and reads the
// cache's shared counters. Contract: test-only; each call is a separate process.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "store/store.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {

using EnvVars = std::map<std::string, std::optional<std::string>>;

inline const std::string kIncludeDir = std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/include";

// Runs the probe's scenarios; PROBE_INCLUDE_DIR defaults to tests/data/include.
ProcessResult probe(const std::vector<std::string>& scenarios, EnvVars env, const std::string& cwd = "");
// The environment that preloads the shim with its cache in `cache_dir`.
EnvVars shim_env(const std::string& cache_dir);
// A node of a shared-tier test: the shim with its cache in `cache_dir`, `remote` as its shared tiers
// (NVRTC_CACHE_REMOTE) and, if given, the tiers' secret file.
EnvVars node_env(const std::string& cache_dir, const std::string& remote, const std::string& secret_file = "");

// What the shared-tier and archive suites compile: a trivial kernel, a template with name
// expressions, a CUBIN, a header found through -I.
inline const std::vector<std::string> kTierScenarios = {"trivial", "template", "cubin", "include_dir"};

// Base of the suites whose client runs must equal one run of kTierScenarios straight against NVRTC
// (no shim), made once per suite and kept in direct_. SetUp asserts that run compiled; root_ is a
// fresh temporary directory per test.
class DirectRunSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;

  static ProcessResult* direct_;
  TempDir root_;
};

// One probe process running the "rounds" scenario (tests/clients/nvrtc_probe.cc): it compiles a program of
// its own for each number of `rounds`, each when the test calls round(n), so that a test can change
// the world between two compiles of one process. The process starts at construction (in a thread of
// the test); finish() waits for it (and lets the rounds not yet run go, as does the destructor). reference(rounds) is
// the same run straight against NVRTC.
class PacedProbe {
 public:
  PacedProbe(const std::vector<int>& rounds, EnvVars env);
  ~PacedProbe();
  PacedProbe(const PacedProbe&) = delete;
  PacedProbe& operator=(const PacedProbe&) = delete;

  // Lets round `n` go and waits until it is done (at most a minute); returns how long it took.
  std::chrono::milliseconds round(int n);
  ProcessResult finish();
  static ProcessResult reference(const std::vector<int>& rounds);

 private:
  TempDir dir_;
  std::vector<int> rounds_;
  ProcessResult result_;
  std::thread process_;
};

// For tests that need the PyPI packages (scripts/python_env.sh): skipped, saying why, when
// PyPI was unreachable; a failure where it must be reachable (NVRTC_CACHE_REQUIRE_PYPI=1, set by
// .ci/run).
#define NVRTC_CACHE_SKIP_WITHOUT_PYPI(message)                                      \
  do {                                                                              \
    if (::nvrtc_cache::testing::pypi_required()) FAIL() << "required: " << message; \
    GTEST_SKIP() << message;                                                        \
  } while (false)
bool pypi_required();

// The cache's counters (empty if there is no store yet).
store::Counters counters_of(const std::string& cache_dir);
std::int64_t get(const store::Counters& counters, const std::string& name);

}  // namespace nvrtc_cache::testing
