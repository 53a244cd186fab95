// nvrtc_cache.activate() (python/nvrtc_cache/activation.py) in plain interpreters, with the real
// stacks from PyPI (scripts/python_env.sh's venv) loading through cuda.pathfinder 1.9: each scenario of
// tests/data/python/activate.py in a fresh process, against a package laid out as the wheel installs
// it (the sources, lib/ from this build). Activated: cuda.core, its Linker (nvJitLink), libNVVM, CuPy's
// compile_using_nvrtc and numba-cuda, exact, then a second interpreter served from the cache;
// activated after NVRTC was loaded: the warning, nothing changed, exact; the real libraries it
// forwards to are the ones cuda.pathfinder loads; %load_ext's entry point.
// Needs NVRTC_CACHE_TEST_PYTHON: skipped without it, failed under NVRTC_CACHE_REQUIRE_PYPI=1.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {
namespace {

namespace fs = std::filesystem;

const std::string kScript = std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/activate.py";

class PythonActivate : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* python = std::getenv("NVRTC_CACHE_TEST_PYTHON");
    if (python == nullptr || access(python, X_OK) != 0) {
      NVRTC_CACHE_SKIP_WITHOUT_PYPI(
          "set NVRTC_CACHE_TEST_PYTHON to a Python with cuda-core, cupy-cuda13x and numba-cuda "
          "(scripts/python_env.sh makes one when PyPI is reachable)");
    }
    python_ = python;
    // The package as pip installs the wheel under a prefix: PREFIX/lib/pythonX.Y/site-packages/nvrtc_cache,
    // PREFIX/bin/nvrtc-cache, PREFIX/lib/nvrtc-cache/proxy/ (which proxy_dir() names); and lib/ inside
    // the package too, for a package that keeps its libraries beside itself.
    const fs::path prefix = package_.path();
    const fs::path build_lib = fs::path(NVRTC_CACHE_PROXY_DIR).parent_path().parent_path();
    site_packages_ = (prefix / "lib" / "python3" / "site-packages").string();
    const fs::path package = fs::path(site_packages_) / "nvrtc_cache";
    fs::create_directories(package);
    for (const auto& entry : fs::directory_iterator(fs::path(NVRTC_CACHE_SOURCE_DIR) / "python" / "nvrtc_cache")) {
      if (entry.path().extension() == ".py") fs::copy_file(entry.path(), package / entry.path().filename());
    }
    fs::create_directory_symlink(build_lib, package / "lib");
    fs::create_directory_symlink(build_lib / "nvrtc-cache", prefix / "lib" / "nvrtc-cache");
    fs::create_directories(prefix / "bin");
    fs::create_symlink(NVRTC_CACHE_CLI_PATH, prefix / "bin" / "nvrtc-cache");
  }

  ProcessResult script(const std::string& scenario) {
    return run_process({python_, kScript, scenario}, {{"PYTHONPATH", site_packages_},
                                                      {"PYTHONDONTWRITEBYTECODE", "1"},
                                                      {"NVRTC_CACHE_DIR", cache_.path()},
                                                      {"LD_PRELOAD", std::nullopt},
                                                      {"NVRTC_CACHE_REAL_NVRTC", std::nullopt},
                                                      {"NVRTC_CACHE_REAL_NVJITLINK", std::nullopt},
                                                      {"NVRTC_CACHE_REAL_NVVM", std::nullopt}});
  }

  std::string run_ok(const std::string& scenario) {
    const ProcessResult r = script(scenario);
    EXPECT_EQ(r.exit_code, 0) << scenario << ":\n" << r.err;
    return r.out;
  }

  std::string python_, site_packages_;
  TempDir package_, cache_;
};

TEST_F(PythonActivate, ServesTheStacksAndASecondInterpreterFromTheCache) {
  const std::string plain = run_ok("plain");
  ASSERT_NE(plain.find("cubin "), std::string::npos) << plain;
  EXPECT_EQ(get(counters_of(cache_.path()), "stores"), 0) << "nothing cached without activate()";
  const std::string cold = run_ok("activated");
  const auto after_cold = counters_of(cache_.path());
  const std::string warm = run_ok("activated");
  const auto after_warm = counters_of(cache_.path());
  EXPECT_TRUE(cold == plain) << cold;
  EXPECT_TRUE(warm == plain) << warm;
  // Cold: every NVRTC compile, the link and the libNVVM compiles went through the cache.
  EXPECT_GE(get(after_cold, "misses"), 9);
  EXPECT_EQ(get(after_cold, "hits"), 0);
  EXPECT_GE(get(after_cold, "link_misses"), 1);
  EXPECT_GE(get(after_cold, "nvvm_misses"), 3);
  // Warm: the second interpreter is served all of them.
  EXPECT_EQ(get(after_warm, "misses"), get(after_cold, "misses"));
  EXPECT_EQ(get(after_warm, "hits"), get(after_cold, "misses"));
  EXPECT_EQ(get(after_warm, "link_hits"), get(after_cold, "link_misses"));
  EXPECT_EQ(get(after_warm, "nvvm_hits"), get(after_cold, "nvvm_misses"));
}

TEST_F(PythonActivate, AfterNvrtcWasLoadedWarnsAndChangesNothing) {
  const std::string plain = run_ok("core");
  ASSERT_NE(plain.find("cubin "), std::string::npos) << plain;
  const ProcessResult late = script("late");
  ASSERT_EQ(late.exit_code, 0) << late.err;
  EXPECT_TRUE(late.out == plain) << late.out;
  EXPECT_NE(late.err.find("was loaded before it"), std::string::npos) << late.err;
  const auto counters = counters_of(cache_.path());
  EXPECT_EQ(get(counters, "misses") + get(counters, "hits") + get(counters, "stores"), 0);
}

TEST_F(PythonActivate, ForwardsToTheLibrariesCudaPathfinderLoads) {
  const std::string where = run_ok("where");
  EXPECT_EQ(std::count(where.begin(), where.end(), '\n'), 3) << where;
  EXPECT_EQ(where.find("none"), std::string::npos) << where;
  EXPECT_EQ(where, run_ok("pathfinder"));
}

TEST_F(PythonActivate, JupyterExtensionActivates) {
  const std::string plain = run_ok("core");
  EXPECT_TRUE(run_ok("ipython") == plain);
  EXPECT_GT(get(counters_of(cache_.path()), "stores"), 0);
}

}  // namespace
}  // namespace nvrtc_cache::testing
