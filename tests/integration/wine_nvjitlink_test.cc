// nvJitLink through the Windows proxy under Wine: nvjitlink_client.exe (tests/clients/windows/
// nvjitlink_client.cc: NVRTC's LTO-IR of two programs linked by nvJitLink, twice, then a link that
// fails) run against the real nvrtc64_130_0.dll and nvJitLink_130_0.dll, then with the proxy core
// and the stand-in nvJitLink_130_0.dll beside the .exe, cold and warm: every link's return codes and
// outputs byte-identical to the real library's, the warm links served, a failed link served with
// its error log, and the reasons in `stats --json` (links' own row). The fixture is wine_fixture.h.
#include "tests/integration/wine_fixture.h"

namespace nvrtc_cache::testing {
namespace {

class WineNvJitLink : public Wine {
 protected:
  void SetUp() override {
    Wine::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(fs::exists(nvrtc_dir_ + "/nvJitLink_130_0.dll")) << "scripts/windows-nvrtc.sh did not unpack nvJitLink";
  }

  // The client in its own directory with the proxy core and the stand-in beside it.
  std::string client_beside_proxy() {
    const std::string exe = client_beside_dll("nvjitlink_client");
    fs::copy_file(prefix_ + "/bin/nvJitLink_130_0.dll", beside_.path() + "/nvJitLink_130_0.dll",
                  fs::copy_options::overwrite_existing);
    return exe;
  }

  EnvVars proxy_env() {
    EnvVars env = cache_env();
    env["NVRTC_CACHE_REAL_NVJITLINK"] = windows_path(nvrtc_dir_ + "/nvJitLink_130_0.dll");
    return env;
  }
};

TEST_F(WineNvJitLink, LinksAreExactColdAndWarmAndServedWarm) {
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

  const std::string exe = client_beside_proxy();
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

TEST_F(WineNvJitLink, WithoutTheCoreTheStandInPassesLinksToTheRealOne) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string direct = client(direct_client("nvjitlink_client"), {}).out;
  // Only the stand-in beside the .exe: NVRTC comes from PATH (the real one), no core is there.
  const std::string exe = beside_.path() + "/nvjitlink_client.exe";
  fs::copy_file(direct_client("nvjitlink_client"), exe, fs::copy_options::overwrite_existing);
  fs::copy_file(prefix_ + "/bin/nvJitLink_130_0.dll", beside_.path() + "/nvJitLink_130_0.dll");
  EXPECT_TRUE(client(exe, {}, proxy_env()).out == direct) << "the stand-in alone changed a result";
}

}  // namespace
}  // namespace nvrtc_cache::testing
