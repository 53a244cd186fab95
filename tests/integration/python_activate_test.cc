// nvrtc_cache.activate() (python/nvrtc_cache/activation.py) in plain interpreters, with the real
// stacks from PyPI (scripts/python_env.sh's venv) loading through cuda.pathfinder 1.9: each scenario of
// tests/data/python/activate.py in a fresh process, against a package laid out as the wheel installs
// it (the sources, lib/ from this build). Activated: cuda.core, its Linker (nvJitLink), libNVVM, CuPy's
// compile_using_nvrtc and numba-cuda, exact, then a second interpreter served from the cache;
// activated after NVRTC was loaded: the warning, nothing changed, exact; the real libraries it
// forwards to are the ones cuda.pathfinder loads; %load_ext's entry point; environment-wide
// activation (python -m nvrtc_cache.environment).
// Needs NVRTC_CACHE_TEST_PYTHON: skipped without it, failed under NVRTC_CACHE_REQUIRE_PYPI=1.
#include <unistd.h>

#include <algorithm>
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
    // The command where the package looks for it (PREFIX/bin): a script that runs this build's.
    std::ofstream(prefix / "bin" / "nvrtc-cache") << "#!/bin/sh\nexec " << NVRTC_CACHE_CLI_PATH << " \"$@\"\n";
    fs::permissions(prefix / "bin" / "nvrtc-cache", fs::perms::owner_all);
  }

  ProcessResult python(const std::vector<std::string>& args, const std::string& interpreter = "",
                       const std::map<std::string, std::optional<std::string>>& more = {}) {
    std::vector<std::string> argv = {interpreter.empty() ? python_ : interpreter};
    argv.insert(argv.end(), args.begin(), args.end());
    std::map<std::string, std::optional<std::string>> env = {{"PYTHONPATH", site_packages_},
                                                             {"PYTHONDONTWRITEBYTECODE", "1"},
                                                             {"NVRTC_CACHE_DIR", cache_.path()},
                                                             {"LD_PRELOAD", std::nullopt},
                                                             {"NVRTC_CACHE_ACTIVATE", std::nullopt},
                                                             {"NVRTC_CACHE_REAL_NVRTC", std::nullopt},
                                                             {"NVRTC_CACHE_REAL_NVJITLINK", std::nullopt},
                                                             {"NVRTC_CACHE_REAL_NVVM", std::nullopt}};
    for (const auto& [name, value] : more) env[name] = value;
    return run_process(argv, env);
  }
  ProcessResult script(const std::string& scenario) { return python({kScript, scenario}); }

  std::string run_ok(const std::string& scenario, const std::string& interpreter = "",
                     const std::map<std::string, std::optional<std::string>>& more = {}) {
    const ProcessResult r = python({kScript, scenario}, interpreter, more);
    EXPECT_EQ(r.exit_code, 0) << scenario << ":\n" << r.err;
    return r.out;
  }

  std::string python_, site_packages_;
  TempDir package_, cache_, env_;
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

// Where the NVRTC the stacks find is 12.x (only the CUDA 12 wheel installed; named here through
// NVRTC_CACHE_REAL_NVRTC, as the test environment has both): activate() loads the stand-in
// libnvrtc.so.12 beside the core; a client of that soname and one of cuda.pathfinder's NVRTC (which
// finds the core as libnvrtc.so.13) are both served by the 12.x NVRTC, exact, cold then warm; a 12.x
// nvJitLink gets the stand-in libnvJitLink.so.12 in place of libnvJitLink.so.13.
TEST_F(PythonActivate, ReachesAnNvrtc12TheStacksFind) {
  const char* nvrtc12 = std::getenv("NVRTC_CACHE_TEST_NVRTC12");
  if (nvrtc12 == nullptr) NVRTC_CACHE_SKIP_WITHOUT_PYPI("set NVRTC_CACHE_TEST_NVRTC12 (scripts/python_env.sh)");
  std::map<std::string, std::optional<std::string>> twelve = {{"NVRTC_CACHE_REAL_NVRTC", nvrtc12}};
  if (const char* nvjitlink12 = std::getenv("NVRTC_CACHE_TEST_NVJITLINK12")) {
    twelve["NVRTC_CACHE_REAL_NVJITLINK"] = nvjitlink12;  // its stand-in too (checked by the script)
  } else if (pypi_required()) {
    FAIL() << "NVRTC_CACHE_TEST_NVJITLINK12 is required";
  }
  const std::string plain = run_ok("nvrtc12-plain", "", twelve);
  ASSERT_EQ(plain.find("NVRTC 13"), std::string::npos) << plain;
  ASSERT_NE(plain.find("NVRTC 12"), std::string::npos) << plain;
  ASSERT_NE(plain.find("CUBIN bytes="), std::string::npos) << plain;
  const std::string cold = run_ok("nvrtc12", "", twelve);
  const auto after_cold = counters_of(cache_.path());
  const std::string warm = run_ok("nvrtc12", "", twelve);
  const auto after_warm = counters_of(cache_.path());
  EXPECT_TRUE(cold == plain) << cold;
  EXPECT_TRUE(warm == plain) << warm;
  // The two clients compile the same program: a miss, then a hit; warm, two hits.
  EXPECT_EQ(get(after_cold, "misses"), 1);
  EXPECT_EQ(get(after_cold, "hits"), 1);
  EXPECT_EQ(get(after_warm, "misses"), 1);
  EXPECT_EQ(get(after_warm, "hits"), 3);
}

// python -m nvrtc_cache.environment enable|status|disable, in an environment of the test's own (a venv
// whose 00-paths.pth adds the test venv's packages and this package, its nvidia/ the wheels): once enabled, its
// interpreters start with the proxies loaded and are cached; NVRTC_CACHE_ACTIVATE=0 keeps a process out; disabled, the
// file is gone.
TEST_F(PythonActivate, EnvironmentWideActivationOnRequest) {
  const std::string plain = run_ok("core");
  const std::string venv = env_.path() + "/venv";
  const ProcessResult made = python({"-m", "venv", "--without-pip", venv});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string interpreter = venv + "/bin/python";
  const ProcessResult purelib =
      python({"-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"}, interpreter);
  ASSERT_EQ(purelib.exit_code, 0) << purelib.err;
  const fs::path site = purelib.out.substr(0, purelib.out.find('\n'));
  const ProcessResult theirs = python({"-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  const fs::path their_site = theirs.out.substr(0, theirs.out.find('\n'));
  std::ofstream(site / "00-paths.pth") << their_site.string() << "\n" << site_packages_ << "\n";
  // The NVIDIA wheels where cuda.pathfinder looks for them (this venv's own site-packages).
  fs::create_directory_symlink(their_site / "nvidia", site / "nvidia");

  EXPECT_NE(python({"-m", "nvrtc_cache.environment", "status"}, interpreter).out.find("is off"), std::string::npos);
  const ProcessResult enabled = python({"-m", "nvrtc_cache.environment", "enable"}, interpreter);
  ASSERT_EQ(enabled.exit_code, 0) << enabled.err;
  ASSERT_TRUE(fs::is_regular_file(site / "nvrtc_cache-activate.pth")) << enabled.out;
  EXPECT_NE(python({"-m", "nvrtc_cache.environment", "status"}, interpreter).out.find("is on"), std::string::npos);

  EXPECT_TRUE(run_ok("unstarted", interpreter, {{"NVRTC_CACHE_ACTIVATE", "0"}}) == plain);
  EXPECT_EQ(get(counters_of(cache_.path()), "stores"), 0);
  EXPECT_TRUE(run_ok("started", interpreter) == plain);
  EXPECT_GT(get(counters_of(cache_.path()), "stores"), 0);

  EXPECT_EQ(python({"-m", "nvrtc_cache.environment", "disable"}, interpreter).exit_code, 0);
  EXPECT_FALSE(fs::exists(site / "nvrtc_cache-activate.pth"));
  EXPECT_TRUE(run_ok("unstarted", interpreter) == plain);
}

}  // namespace
}  // namespace nvrtc_cache::testing
