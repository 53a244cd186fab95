// A machine with only PyPI's CUDA wheels: /usr/local/cuda* hidden (an empty tmpfs over each, in a
// mount namespace of the child: `unshare -m`), NVRTC from the test venv's nvidia-cuda-nvrtc wheel
// (scripts/python_env.sh). `doctor` names the wheel's NVRTC (found in site-packages) and passes,
// its sample compile served from the cache; `run --proxy` reaches a Python that loads NVRTC by
// soname, forwards to the wheel's NVRTC (found at run time, not the build's toolkit), exact, and
// serves the second run. The search order itself is unit-tested (tests/unit/library_search_test.cc).
// Needs NVRTC_CACHE_TEST_PYTHON and root (to mount): skipped without them, failed under
// NVRTC_CACHE_REQUIRE_PYPI=1.
#include <unistd.h>

#include <filesystem>
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

const std::string kClient = std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/nvrtc_by_soname.py";

// The shell prefix that hides every /usr/local/cuda* directory, then runs "$@".
const char* kHideToolkit =
    "for d in /usr/local/cuda*; do if [ -d \"$d\" ] && [ ! -L \"$d\" ]; then "
    "mount -t tmpfs -o size=1m none \"$d\" || exit 97; fi; done; "
    "if [ -e /usr/local/cuda/lib64/libnvrtc.so.13 ] || ls /usr/local/cuda*/lib*/libnvrtc.so* >/dev/null 2>&1; "
    "then exit 98; fi; exec \"$@\"";

// The program `name` on PATH ("" if none): run_process takes a path.
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string rest = path ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string dir = rest.substr(0, colon);
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  }
  return "";
}

class ToolkitFree : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* python = std::getenv("NVRTC_CACHE_TEST_PYTHON");
    if (python == nullptr || access(python, X_OK) != 0) {
      NVRTC_CACHE_SKIP_WITHOUT_PYPI("set NVRTC_CACHE_TEST_PYTHON (scripts/python_env.sh makes one)");
    }
    python_ = python;
    venv_ = fs::path(python_).parent_path().parent_path().string();
    const ProcessResult probe = hidden({"true"});
    if (probe.exit_code == 97 || probe.exit_code < 0 || probe.exit_code == 127 ||
        (probe.exit_code != 0 && probe.err.find("unshare") != std::string::npos)) {
      if (pypi_required()) FAIL() << "needs root to hide the toolkit in a mount namespace: " << probe.err;
      GTEST_SKIP() << "needs root to hide the toolkit in a mount namespace (exit " << probe.exit_code
                   << "): " << probe.err;
    }
    ASSERT_EQ(probe.exit_code, 0) << "the toolkit is still visible in the namespace: " << probe.err;
  }

  // argv in a mount namespace whose /usr/local/cuda* are empty.
  ProcessResult hidden(const std::vector<std::string>& argv,
                       const std::map<std::string, std::optional<std::string>>& more = {}) {
    std::vector<std::string> full = {on_path("unshare"), "-m", "/bin/sh", "-c", kHideToolkit, "hide"};
    full.insert(full.end(), argv.begin(), argv.end());
    std::map<std::string, std::optional<std::string>> env = {
        {"NVRTC_CACHE_DIR", cache_.path()}, {"VIRTUAL_ENV", std::nullopt},  {"CUDA_HOME", std::nullopt},
        {"CUDA_PATH", std::nullopt},        {"CONDA_PREFIX", std::nullopt}, {"LD_LIBRARY_PATH", std::nullopt}};
    for (const auto& [name, value] : more) env[name] = value;
    return run_process(full, env);
  }

  std::string python_, venv_;
  TempDir cache_;
};

TEST_F(ToolkitFree, DoctorNamesTheWheelsNvrtcAndPasses) {
  const ProcessResult r = hidden({NVRTC_CACHE_CLI_PATH, "doctor"}, {{"VIRTUAL_ENV", venv_}});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string wheel_nvrtc = "/site-packages/nvidia/cu13/lib/libnvrtc.so.13 (NVRTC 13.";
  EXPECT_NE(r.out.find(wheel_nvrtc), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("found in site-packages"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("/usr/local/cuda"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("served from the cache, byte-identical"), std::string::npos) << r.out;
}

TEST_F(ToolkitFree, TheProxyForwardsToTheWheelsNvrtcAndServesTheSecondRun) {
  // The precondition: the loader finds no libnvrtc.so.13 by soname here.
  const ProcessResult plain = hidden({python_, kClient});
  ASSERT_NE(plain.exit_code, 0) << "libnvrtc.so.13 loads by soname with the toolkit hidden:\n" << plain.out;
  const std::string wheel_dir = [&] {
    for (const auto& entry : fs::directory_iterator(fs::path(venv_) / "lib")) {
      const fs::path dir = entry.path() / "site-packages" / "nvidia" / "cu13" / "lib";
      if (fs::exists(dir / "libnvrtc.so.13")) return dir.string();
    }
    return std::string();
  }();
  ASSERT_FALSE(wheel_dir.empty()) << "no nvidia-cuda-nvrtc 13 wheel in " << venv_;
  const ProcessResult direct = hidden({python_, kClient}, {{"LD_LIBRARY_PATH", wheel_dir}});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_NE(direct.out.find("ptx "), std::string::npos) << direct.out;

  const std::vector<std::string> proxied = {NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", python_, kClient};
  const ProcessResult cold = hidden(proxied);
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_EQ(cold.out, direct.out) << "the proxy forwards to the wheel's NVRTC, exactly";
  EXPECT_EQ(get(counters_of(cache_.path()), "misses"), 1);
  const ProcessResult warm = hidden(proxied);
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_EQ(warm.out, direct.out);
  EXPECT_EQ(get(counters_of(cache_.path()), "hits"), 1);
  EXPECT_EQ(get(counters_of(cache_.path()), "misses"), 1);
}

}  // namespace
}  // namespace nvrtc_cache::testing
