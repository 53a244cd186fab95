// A miss whose program was evicted says so (store/lmdb/evicted_keys.h), through real processes and
// the real NVRTC: a 1 MiB cache of uncompressed CUB entries evicts the first program, whose next
// compile is counted as miss.evicted (not as a new program), logged with that reason, and shown by
// `nvrtc-cache stats`.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using testing::EnvVars;
using testing::probe;
using testing::run_process;
using testing::shim_env;
using testing::TempDir;

TEST(ShimEviction, TheMissOfAnEvictedProgramSaysSo) {
  TempDir dir;
  EnvVars env = shim_env(dir.path());
  env["NVRTC_CACHE_MAX_SIZE"] = "1M";
  env["NVRTC_CACHE_COMPRESSION"] = "0";  // ~0.2 MiB an entry: a few fill the cache
  env["NVRTC_CACHE_LOG"] = "info";
  env["PROBE_SOURCE_FILE"] = std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/include/cub_variant.cu";
  env["PROBE_INCLUDE_DIR"] = "/usr/local/cuda/include/cccl:/usr/local/cuda/include";
  auto compile_variant = [&](int n) {
    EnvVars variant = env;
    variant["PROBE_OPTIONS"] = "-std=c++17 -DVARIANT=" + std::to_string(n);
    return probe({"source_file"}, variant);
  };
  int evicted_at = -1;
  for (int n = 0; n < 12 && evicted_at < 0; ++n) {
    const auto run = compile_variant(n);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    if (testing::get(testing::counters_of(dir.path()), "evictions") > 0) evicted_at = n;
  }
  ASSERT_GE(evicted_at, 1) << "nothing was evicted";
  const auto again = compile_variant(0);  // the least recently used: evicted first
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const store::Counters counters = testing::counters_of(dir.path());
  EXPECT_EQ(testing::get(counters, "miss.evicted"), 1);
  EXPECT_EQ(testing::get(counters, "miss.new_program"), evicted_at + 1);
  EXPECT_NE(again.err.find("evicted (the cache reached max_size)"), std::string::npos) << again.err;

  const auto stats = run_process({NVRTC_CACHE_CLI_PATH, "stats"}, {{"NVRTC_CACHE_DIR", dir.path()}});
  EXPECT_NE(stats.out.find("evicted"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("its result was evicted to stay under max_size"), std::string::npos) << stats.out;

  // Cleared, the cache forgets what it evicted: the next compile is a new program again.
  ASSERT_EQ(run_process({NVRTC_CACHE_CLI_PATH, "clear"}, {{"NVRTC_CACHE_DIR", dir.path()}}).exit_code, 0);
  const auto after_clear = compile_variant(1);
  ASSERT_EQ(after_clear.exit_code, 0) << after_clear.err;
  EXPECT_EQ(testing::get(testing::counters_of(dir.path()), "miss.new_program"), 1);
}

}  // namespace
}  // namespace nvrtc_cache
