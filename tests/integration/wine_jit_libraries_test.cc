// nvJitLink and libNVVM through the Windows proxy under Wine, each by its stand-in DLL over the proxy
// core: nvjitlink_client.exe (tests/clients/windows/nvjitlink_client.cc: NVRTC's LTO-IR of two
// programs linked by nvJitLink, twice, then a link that fails) and nvvm_client.exe (the Linux
// client's libNVVM scenarios, tests/clients/nvvm_client.cc) run against the real DLLs, then with the
// proxy core and the stand-ins beside the .exe, cold and warm: every return code and output
// byte-identical to the real library's, the warm calls served, failures served with their logs,
// refused options passed through, and the reasons in `stats --json` (each library's own row). The
// fixture is wine_fixture.h.
#include "tests/integration/wine_fixture.h"

namespace nvrtc_cache::testing {
namespace {

class WineJitLibraries : public Wine {
 protected:
  void SetUp() override {
    Wine::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* dll : {"nvJitLink_130_0.dll", "nvvm64_40_0.dll"})
      ASSERT_TRUE(fs::exists(nvrtc_dir_ + "/" + dll)) << "scripts/windows-nvrtc.sh did not unpack " << dll;
  }

  // `client` in its own directory with the proxy core and `standin` beside it.
  std::string client_beside_proxy(const std::string& client, const std::string& standin = "nvJitLink_130_0.dll") {
    const std::string exe = client_beside_dll(client);
    fs::copy_file(prefix_ + "/bin/" + standin, beside_.path() + "/" + standin, fs::copy_options::overwrite_existing);
    return exe;
  }

  EnvVars proxy_env() {
    EnvVars env = cache_env();
    env["NVRTC_CACHE_REAL_NVJITLINK"] = windows_path(nvrtc_dir_ + "/nvJitLink_130_0.dll");
    env["NVRTC_CACHE_REAL_NVVM"] = windows_path(nvrtc_dir_ + "/nvvm64_40_0.dll");
    return env;
  }
};

TEST_F(WineJitLibraries, LinksAreExactColdAndWarmAndServedWarm) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string direct = client(direct_client("nvjitlink_client"), {}).out;
  ASSERT_NE(direct.find("nvJitLinkVersion rc=0 13.0\n"), std::string::npos) << direct;
  ASSERT_NE(direct.find("### link\n  create rc=0\n  add kernel.ltoir rc=0\n  add helper.ltoir rc=0\n  complete rc=0\n"
                        "  cubin size_rc=0 size="),
            std::string::npos)
      << "the real nvJitLink did not link: " << direct;
  ASSERT_NE(direct.find("### undefined\n  create rc=0\n  add kernel.ltoir rc=0\n  complete rc=4\n"), std::string::npos)
      << "the undefined function did not fail the link (NVJITLINK_ERROR_PTX_COMPILE): " << direct;
  ASSERT_NE(direct.find(hex_of("Unresolved extern function")), std::string::npos) << "its error log";

  const std::string exe = client_beside_proxy("nvjitlink_client");
  EXPECT_TRUE(client(exe, {}, proxy_env()).out == direct) << "cold run differs from the real nvJitLink";
  const nlohmann::json cold = stats();
  const std::string warm = client(exe, {}, proxy_env()).out;
  EXPECT_TRUE(warm == direct) << "warm run differs from the real nvJitLink";
  const nlohmann::json after = stats();

  // Cold: the first link and the failed one linked and stored, the second link served in-process.
  EXPECT_EQ(cold["links"].value("misses", 0), 2) << cold.dump();
  EXPECT_EQ(cold["links"].value("hits", 0), 1) << cold.dump();
  EXPECT_EQ(cold["links"]["reasons"]["miss"].value("new_program", 0), 2) << cold.dump();
  // Warm: all three served, the failed link too; NVRTC's compiles served alike.
  EXPECT_EQ(after["links"].value("misses", 0), 2) << "a warm link missed: " << after.dump();
  EXPECT_EQ(after["links"].value("hits", 0), 4) << after.dump();
  EXPECT_EQ(after.value("hits", 0), cold.value("hits", 0) + 2) << "the LTO-IR compiles were not served warm";
  EXPECT_EQ(after["links"].value("uncacheable", 0), 0) << after.dump();
}

TEST_F(WineJitLibraries, WithoutTheCoreTheStandInPassesLinksToTheRealOne) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string direct = client(direct_client("nvjitlink_client"), {}).out;
  // Only the stand-in beside the .exe: NVRTC comes from PATH (the real one), no core is there.
  const std::string exe = beside_.path() + "/nvjitlink_client.exe";
  fs::copy_file(direct_client("nvjitlink_client"), exe, fs::copy_options::overwrite_existing);
  fs::copy_file(prefix_ + "/bin/nvJitLink_130_0.dll", beside_.path() + "/nvJitLink_130_0.dll");
  EXPECT_TRUE(client(exe, {}, proxy_env()).out == direct) << "the stand-in alone changed a result";
}

TEST_F(WineJitLibraries, NvvmCompilesAreExactColdAndWarmAndServedWarm) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::vector<std::string> scenarios = {"ptx",    "gen_lto",    "lazy",      "verified",
                                              "broken", "bad_option", "no_module", "after_compile"};
  const std::string direct = client(direct_client("nvvm_client"), scenarios).out;
  ASSERT_NE(direct.find("ptx\n  create=0\n  add=0\n  add=0\n  compile=0\n  result size_rc=0"), std::string::npos)
      << "the real libNVVM did not compile: " << direct;
  ASSERT_NE(direct.find("broken\n  create=0\n  add=0\n  add=0\n  compile=9\n"), std::string::npos)
      << "the broken module did not fail (NVVM_ERROR_COMPILATION): " << direct;
  const std::string exe = client_beside_proxy("nvvm_client", "nvvm64_40_0.dll");
  EXPECT_TRUE(client(exe, scenarios, proxy_env()).out == direct) << "cold run differs from the real libNVVM";
  const nlohmann::json cold = stats();
  EXPECT_TRUE(client(exe, scenarios, proxy_env()).out == direct) << "warm run differs from the real libNVVM";
  const nlohmann::json after = stats();
  // Seven compiles kept (the broken one and the empty program too), the unknown option passed through.
  EXPECT_EQ(cold["nvvm_compiles"].value("misses", 0), 7) << cold.dump();
  EXPECT_EQ(cold["nvvm_compiles"]["reasons"]["uncacheable"].value("unknown_option", 0), 1) << cold.dump();
  EXPECT_EQ(after["nvvm_compiles"].value("hits", 0), 7) << "not served warm: " << after.dump();
  EXPECT_EQ(after["nvvm_compiles"].value("misses", 0), 7) << "a warm compile missed: " << after.dump();
  EXPECT_EQ(after["links"].value("hits", 0), 0) << "counted in another library's row";
}

}  // namespace
}  // namespace nvrtc_cache::testing
