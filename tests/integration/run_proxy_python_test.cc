// `nvrtc-cache run --proxy -- python PROGRAM` with the real stacks from PyPI (scripts/python_env.sh's
// venv, cuda.core loading through cuda.pathfinder by path): the command's start-up hook
// (share/nvrtc-cache/python/sitecustomize.py of this build tree, activation.py loaded by path as the
// venv has no nvrtc_cache package) puts the proxies in front. tests/data/python/pypi_only.py (name
// expressions, an LTO-IR link by cuda.core's Linker, bundled headers) is exact cold and warm, the warm
// run served from the cache; a user's own sitecustomize further on PYTHONPATH still runs, and without
// one the hook leaves nothing behind (no error from site).
// Needs NVRTC_CACHE_TEST_PYTHON: skipped without it, failed under NVRTC_CACHE_REQUIRE_PYPI=1.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {
namespace {

namespace fs = std::filesystem;

const std::string kProgram = std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/pypi_only.py";

TEST(RunProxyPython, CudaCoreIsExactAndServedWarmAndTheUsersSitecustomizeRuns) {
  const char* python = std::getenv("NVRTC_CACHE_TEST_PYTHON");
  if (python == nullptr || access(python, X_OK) != 0) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI(
        "set NVRTC_CACHE_TEST_PYTHON to a Python with cuda-core "
        "(scripts/python_env.sh makes one when PyPI is reachable)");
  }
  TempDir cache, work;
  const fs::path user = fs::path(work.path()) / "user";
  fs::create_directories(user);
  const std::string mark = work.path() + "/user-sitecustomize-ran";
  std::ofstream(user / "sitecustomize.py") << "open(" << '"' << mark << '"' << ", 'w').close()\n";
  std::map<std::string, std::optional<std::string>> env = {{"NVRTC_CACHE_DIR", cache.path()},
                                                           {"XDG_CACHE_HOME", work.path() + "/xdg"},
                                                           {"PYTHONDONTWRITEBYTECODE", "1"},
                                                           {"PYTHONPATH", std::nullopt}};
  const ProcessResult plain = run_process({python, kProgram}, env);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_NE(plain.out.find("cubin"), std::string::npos) << plain.out;
  ASSERT_EQ(get(counters_of(cache.path()), "stores"), 0) << "nothing cached without the command";

  env["PYTHONPATH"] = user.string();
  const ProcessResult cold = run_process({NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", python, kProgram}, env);
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_TRUE(cold.out == plain.out) << cold.out;
  EXPECT_TRUE(fs::exists(mark)) << "the user's sitecustomize did not run:\n" << cold.err;
  const auto after_cold = counters_of(cache.path());
  EXPECT_GE(get(after_cold, "misses"), 3);
  EXPECT_EQ(get(after_cold, "hits"), 0);
  EXPECT_GE(get(after_cold, "link_misses"), 1);

  env["PYTHONPATH"] = std::nullopt;
  const ProcessResult warm = run_process({NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", python, kProgram}, env);
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_TRUE(warm.out == plain.out) << warm.out;
  EXPECT_EQ(warm.err.find("sitecustomize"), std::string::npos) << warm.err;
  EXPECT_EQ(warm.err.find("reached the cache"), std::string::npos) << warm.err;
  const auto after_warm = counters_of(cache.path());
  EXPECT_EQ(get(after_warm, "misses"), get(after_cold, "misses"));
  EXPECT_EQ(get(after_warm, "hits"), get(after_cold, "misses"));
  EXPECT_EQ(get(after_warm, "link_hits"), get(after_cold, "link_misses"));
}

}  // namespace
}  // namespace nvrtc_cache::testing
