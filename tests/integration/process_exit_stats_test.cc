// Statistics count every process's compiles, however the process ends: Python's fork and spawn
// pools and ProcessPoolExecutor (workers leave through os._exit or SIGTERM), a forked child ending
// with os._exit right after its compile, and one killed with SIGKILL. Each run is compared byte for
// byte with the same client without the shim; `stats` must then say exactly what happened: N
// misses and stores cold, N hits warm.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/dynamic_section.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

constexpr std::int64_t kKernels = 4;  // tests/data/python/pool_client.py's N

class ProcessExitStats : public ::testing::TestWithParam<std::string> {};

TEST_P(ProcessExitStats, EveryWorkersCompilesAreCounted) {
  ASSERT_FALSE(python_binary("python3").empty());
  const std::vector<std::string> argv = {
      "/usr/bin/env", "python3", std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/pool_client.py", GetParam()};
  TempDir cache;
  EnvVars plain = {{"LD_LIBRARY_PATH", std::string(CUDA_NVRTC_LIBRARY_DIR)}};
  const ProcessResult direct = run_process(argv, plain);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_NE(direct.out.find("kernel 3: rc 0 0 0 0"), std::string::npos) << direct.out;

  EnvVars shimmed = shim_env(cache.path());
  shimmed["LD_LIBRARY_PATH"] = std::string(CUDA_NVRTC_LIBRARY_DIR);
  const ProcessResult cold = run_process(argv, shimmed);
  EXPECT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_TRUE(cold.out == direct.out) << "cold differs from NVRTC\n" << cold.out << cold.err;
  const auto after_cold = counters_of(cache.path());
  EXPECT_EQ(get(after_cold, "misses"), kKernels) << "a worker's misses were lost";
  EXPECT_EQ(get(after_cold, "stores"), kKernels);
  EXPECT_EQ(get(after_cold, "hits"), 0);

  const ProcessResult warm = run_process(argv, shimmed);
  EXPECT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_TRUE(warm.out == direct.out) << "warm differs from NVRTC\n" << warm.out << warm.err;
  const auto after_warm = counters_of(cache.path());
  EXPECT_EQ(get(after_warm, "hits"), kKernels) << "a worker's hits were lost";
  EXPECT_EQ(get(after_warm, "misses"), kKernels) << "the warm run missed";
  EXPECT_GT(get(after_warm, "hit_replay_ns"), 0);
}

INSTANTIATE_TEST_SUITE_P(Python, ProcessExitStats,
                         ::testing::Values("fork", "spawn", "executor", "os_exit", "sigkill"));

}  // namespace
}  // namespace nvrtc_cache
