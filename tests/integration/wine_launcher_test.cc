// `nvrtc-cache.exe run` under Wine (tests/clients/windows/loader_client.cc): the loading styles a
// proxy beside the .exe does not reach, cold and warm against the uncached run; its exit code and
// fail-open.
#include "tests/integration/wine_fixture.h"

namespace nvrtc_cache::testing {
namespace {

// `nvrtc-cache.exe run` (tools/windows/run_command.cc, shim/windows/loader_redirect.h) reaches the
// loading styles no proxy beside the .exe reaches (tests/clients/windows/loader_client.cc): the real
// DLL by its full path from its own directory, LoadLibraryExW(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS) after
// AddDllDirectory (found through GetProcAddress, as ctypes does), an intermediate DLL that imports
// NVRTC, a child process that compiles, and a program linked with NVRTC's import library (bound by
// the loader before the proxy is injected). Each runs uncached, then through `run` cold and warm in
// separate processes: byte-identical to the uncached run, the cold run a miss per compile, the warm
// one served from the cache (the stats). The proxy finds the real DLL the program loaded itself
// (NVRTC_CACHE_REAL_NVRTC is not set).
class WineLauncher : public Wine, public ::testing::WithParamInterface<std::vector<std::string>> {
 protected:
  std::vector<std::string> client_args(const std::vector<std::string>& style) {
    std::vector<std::string> argv = {windows_path(bin_ + "/loader_client.exe")};
    if (style == std::vector<std::string>{"linked"}) {  // the .exe's own import table (NVRTC found on PATH)
      argv = {windows_path(bin_ + "/nvrtc_client_linked.exe")};
      argv.insert(argv.end(), kScenarios.begin(), kScenarios.end());
      return argv;
    }
    for (const std::string& part : style) {
      if (part == "DLL") {
        argv.push_back(windows_path(nvrtc_dir_ + "/nvrtc64_130_0.dll"));
      } else if (part == "DIR") {
        argv.push_back(windows_path(nvrtc_dir_));
      } else {
        argv.push_back(part);
      }
    }
    argv.insert(argv.end(), kScenarios.begin(), kScenarios.end());
    return argv;
  }

  ProcessResult launched(const std::vector<std::string>& argv, const std::string& launcher) {
    std::vector<std::string> command = {launcher, "run", "--"};
    command.insert(command.end(), argv.begin(), argv.end());
    return run(command, {{"NVRTC_CACHE_DIR", windows_path(cache_.path())}});
  }

  nlohmann::json launcher_stats() {
    const ProcessResult r =
        run({prefix_ + "/bin/nvrtc-cache.exe", "stats", "--json"}, {{"NVRTC_CACHE_DIR", windows_path(cache_.path())}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  const std::vector<std::string> kScenarios = {"trivial", "template", "headers"};
};

TEST_P(WineLauncher, ColdAndWarmIdenticalToUncached) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::vector<std::string> argv = client_args(GetParam());
  const ProcessResult uncached = run(argv);
  ASSERT_EQ(uncached.exit_code, 0) << uncached.err;
  ASSERT_NE(uncached.out.find("### headers\n"), std::string::npos) << uncached.out;
  ASSERT_NE(uncached.out.find("compile rc=0"), std::string::npos) << uncached.out;
  const std::string launcher = prefix_ + "/bin/nvrtc-cache.exe";
  const ProcessResult cold = launched(argv, launcher);
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_TRUE(cold.out == uncached.out) << "cold run differs from the uncached run";
  EXPECT_EQ(cold.err.find("nvrtc-cache"), std::string::npos) << cold.err;
  const nlohmann::json after_cold = launcher_stats();
  const ProcessResult warm = launched(argv, launcher);
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_TRUE(warm.out == uncached.out) << "warm run differs from the uncached run";
  const nlohmann::json after_warm = launcher_stats();
  EXPECT_EQ(after_cold.value("hits", -1), 0) << after_cold.dump();
  EXPECT_GE(after_cold.value("misses", 0), static_cast<int>(kScenarios.size())) << "not reached: " << after_cold.dump();
  EXPECT_EQ(after_warm.value("misses", -1), after_cold.value("misses", -2)) << "warm run missed: " << after_warm.dump();
  EXPECT_EQ(after_warm.value("hits", 0), after_cold.value("misses", -1))
      << "warm run not served: " << after_warm.dump();
}

INSTANTIATE_TEST_SUITE_P(LoadingStyles, WineLauncher,
                         ::testing::Values(std::vector<std::string>{"fullpath", "DLL"},
                                           std::vector<std::string>{"searchdirs", "DIR"},
                                           std::vector<std::string>{"intermediate", "-"},
                                           std::vector<std::string>{"child", "fullpath", "DLL"},
                                           std::vector<std::string>{"linked"}),
                         [](const auto& style) { return style.param[0]; });

// `run` exits as its program did, and fails open: with no DLL to inject (the launcher alone in a
// folder) the program runs uncached, exactly, and this is said once on stderr, never on stdout.
TEST_F(WineLauncher, ExitCodeAndFailOpen) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string launcher = prefix_ + "/bin/nvrtc-cache.exe";
  EXPECT_EQ(launched({"cmd.exe", "/c", "exit 7"}, launcher).exit_code, 7);
  const std::vector<std::string> argv = client_args({"fullpath", "DLL"});
  const ProcessResult uncached = run(argv);
  ASSERT_EQ(uncached.exit_code, 0) << uncached.err;
  const TempDir alone;
  fs::copy_file(launcher, alone.path() + "/nvrtc-cache.exe");
  const ProcessResult r = launched(argv, alone.path() + "/nvrtc-cache.exe");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == uncached.out);
  const std::string said = "it runs uncached";
  const std::size_t at = r.err.find(said);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(said, at + 1), std::string::npos) << "said more than once: " << r.err;
  EXPECT_EQ(r.out.find("nvrtc-cache"), std::string::npos);
  EXPECT_FALSE(fs::exists(cache_.path() + "/store")) << "the program was cached without its DLL";
}

}  // namespace
}  // namespace nvrtc_cache::testing
