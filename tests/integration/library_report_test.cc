// Which library a command and an entry belong to, with real processes: `nvrtc-cache doctor -- CMD`
// reports the NVRTC the command's compiles reached the cache through (the toolkit's 13.0 for the linked
// probe, the nvidia-cuda-nvrtc wheel's 13.5 for cuda.core in the venv of scripts/python_env.sh), and
// fails for a command whose compiles are not reached; entries made by two NVRTC versions name their
// version in `ls`, `inspect` and `stats`, text and --json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

const std::string kToolkitNvrtc = std::string(CUDA_NVRTC_LIBRARY_DIR) + "/libnvrtc.so.13";

EnvVars cache_env(const TempDir& cache) {
  EnvVars env = {{"NVRTC_CACHE_DIR", cache.path()},
                 {"COLUMNS", "200"},
                 {"NVRTC_CACHE_LOG", std::nullopt},
                 {"LD_PRELOAD", std::nullopt},
                 {"NVRTC_CACHE_SHIM", NVRTC_CACHE_SHIM_PATH}};
  return env;
}

std::string canonical(const std::string& path) {
  std::error_code error;
  const auto c = std::filesystem::canonical(path, error);
  return error ? path : c.string();
}

TEST(DoctorRun, ReportsTheNvrtcTheProbeLoads) {
  TempDir cache;
  EnvVars env = cache_env(cache);
  env["LD_LIBRARY_PATH"] = CUDA_NVRTC_LIBRARY_DIR;
  env["PROBE_INCLUDE_DIR"] = kIncludeDir;
  const ProcessResult json = cli({"doctor", "--json", "--", NVRTC_PROBE_PATH, "trivial", "template"}, env);
  ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_TRUE(j["reached"].get<bool>());
  EXPECT_GE(j["compiles_reached"].get<int>(), 2);
  ASSERT_EQ(j["libraries"].size(), 1u) << json.out;
  const auto& nvrtc = j["libraries"][0];
  EXPECT_EQ(nvrtc["library"], "NVRTC");
  EXPECT_EQ(nvrtc["version"], "13.0");
  EXPECT_EQ(canonical(nvrtc["path"]), canonical(kToolkitNvrtc));
  EXPECT_EQ(nvrtc["build_id"].get<std::string>().size(), 40u) << json.out;
  EXPECT_EQ(nvrtc["processes"], 1);
  EXPECT_EQ(get(counters_of(cache.path()), "stores"), j["compiles_reached"].get<int>())
      << "doctor -- CMD runs it under the cache";

  const ProcessResult text = cli({"doctor", "--", NVRTC_PROBE_PATH, "trivial"}, env);
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("NVRTC"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(13.0, build-id " + nvrtc["build_id"].get<std::string>() + "): "), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("verdict        ok"), std::string::npos) << text.out;
}

TEST(DoctorRun, FailsWhenNoCompileIsReached) {
  TempDir cache;
  const ProcessResult json = cli({"doctor", "--json", "--", "/bin/true"}, cache_env(cache));
  EXPECT_EQ(json.exit_code, 1) << json.out << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_FALSE(j["reached"].get<bool>());
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_TRUE(j["libraries"].empty());
  const ProcessResult text = cli({"doctor", "--", "/bin/true"}, cache_env(cache));
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("FAIL"), std::string::npos) << text.out;
}

TEST(DoctorRun, ReportsTheWheelNvrtcCudaCoreLoads) {
  const char* python = std::getenv("NVRTC_CACHE_TEST_PYTHON");
  const char* wheel = std::getenv("NVRTC_CACHE_TEST_NVRTC13");
  if (python == nullptr || access(python, X_OK) != 0 || wheel == nullptr) {
    NVRTC_CACHE_SKIP_WITHOUT_PYPI("set NVRTC_CACHE_TEST_PYTHON and NVRTC_CACHE_TEST_NVRTC13 (scripts/python_env.sh)");
  }
  TempDir cache;
  EnvVars env = cache_env(cache);
  env["PYTHONDONTWRITEBYTECODE"] = "1";
  const ProcessResult run = cli({"doctor", "--json", "--", python,
                                 std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/jit_stacks.py", "core"},
                                env);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  bool wheel_reached = false;
  for (const auto& l : j["libraries"]) {
    if (l["library"] == "NVRTC" && canonical(l["path"]) == canonical(wheel)) {
      EXPECT_EQ(l["version"], "13.5") << run.out;
      EXPECT_GT(l["compiles"].get<int>(), 0);
      wheel_reached = true;
    }
  }
  EXPECT_TRUE(wheel_reached) << run.out;
}

// The unlinked probe loads each NVRTC by path (as cuda.pathfinder does): the same programs, two versions.
TEST(EntryLibrary, TwoNvrtcVersionsAreToldApart) {
  const char* wheel = std::getenv("NVRTC_CACHE_TEST_NVRTC13");
  if (wheel == nullptr) NVRTC_CACHE_SKIP_WITHOUT_PYPI("NVRTC 13.5 (scripts/python_env.sh finds it)");
  TempDir cache;
  for (const std::string& library : {kToolkitNvrtc, std::string(wheel)}) {
    EnvVars env = shim_env(cache.path());
    env["PROBE_LOAD"] = "path:" + library;
    env["PROBE_INCLUDE_DIR"] = kIncludeDir;
    const ProcessResult r = run_process({NVRTC_PROBE_UNLINKED_PATH, "trivial"}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ASSERT_EQ(get(counters_of(cache.path()), "stores"), 2) << "one entry per NVRTC";
  const EnvVars env = cache_env(cache);
  const ProcessResult ls_json = cli({"ls", "--json"}, env);
  ASSERT_EQ(ls_json.exit_code, 0) << ls_json.err;
  const auto entries = nlohmann::json::parse(ls_json.out)["entries"];
  ASSERT_EQ(entries.size(), 2u);
  std::set<std::string> versions;
  for (const auto& e : entries) {
    EXPECT_EQ(e["library"]["name"], "NVRTC");
    EXPECT_EQ(e["library"]["build_id"].get<std::string>().size(), 40u);
    versions.insert(e["library"]["version"]);
  }
  EXPECT_EQ(versions, (std::set<std::string>{"13.0", "13.5"}));

  const ProcessResult ls = cli({"ls"}, env);
  EXPECT_NE(ls.out.find("version"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find(" 13.0 "), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find(" 13.5 "), std::string::npos) << ls.out;

  for (const auto& e : entries) {
    const std::string key = e["key"];
    const std::string version = e["library"]["version"];
    const ProcessResult text = cli({"inspect", key.substr(0, 12)}, env);
    EXPECT_NE(text.out.find("library        NVRTC " + version + " (build-id " +
                            e["library"]["build_id"].get<std::string>() + ")"),
              std::string::npos)
        << text.out;
    const ProcessResult json = cli({"inspect", "--json", key.substr(0, 12)}, env);
    EXPECT_EQ(nlohmann::json::parse(json.out)["library_version"]["version"], version) << json.out;
  }

  const ProcessResult stats_json = cli({"stats", "--json"}, env);
  std::set<std::string> shares;
  const auto stats_report = nlohmann::json::parse(stats_json.out);
  for (const auto& s : stats_report["by_library"]) {
    EXPECT_EQ(s["results"], 1);
    shares.insert(s["name"].get<std::string>() + " " + s["version"].get<std::string>());
  }
  EXPECT_EQ(shares, (std::set<std::string>{"NVRTC 13.0", "NVRTC 13.5"})) << stats_json.out << stats_json.err;
  const ProcessResult stats = cli({"stats"}, env);
  EXPECT_NE(stats.out.find("NVRTC 13.5"), std::string::npos) << stats.out;
}

}  // namespace
}  // namespace nvrtc_cache
