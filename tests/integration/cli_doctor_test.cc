// `nvrtc-cache doctor`'s verdicts, run as processes: an empty or broken NVRTC first on the library
// path, a sample compile that NVRTC itself fails, NVRTC_APPEND_FLAGS named where it stops caching, and
// one verdict per check on a healthy setup.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.h"
#include "store/lmdb/lmdb_store.h"
#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

// Each check's lines: never "ok" and "FAIL" for the same one.
void expect_one_verdict_per_check(const std::string& report) {
  std::map<std::string, std::set<std::string>> verdicts;
  for (const std::string& line : lines_of(report)) {
    if (line.size() < 23 || line.starts_with("verdict")) continue;
    verdicts[line.substr(6, 16)].insert(line.substr(0, 4));
  }
  for (const auto& [topic, seen] : verdicts) {
    EXPECT_FALSE(seen.count("ok  ") && seen.count("FAIL")) << topic << " in " << report;
  }
}

TEST(CliDoctor, AnEmptyOrBrokenNvrtcFirstOnTheLibraryPathFails) {
  TempDir home, libraries;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  const std::string empty = libraries.path() + "/libnvrtc.so.13";
  write_file(empty, "");
  env["LD_LIBRARY_PATH"] = libraries.path();
  env["VIRTUAL_ENV"] = std::nullopt;  // no wheel's NVRTC found before the loader's directories
  for (const bool compile : {false, true}) {
    std::vector<std::string> args = {"doctor"};
    if (!compile) args.push_back("--no-compile");
    const auto report = cli(args, env);
    EXPECT_EQ(report.exit_code, 1) << report.out << report.err;
    EXPECT_NE(report.out.find("FAIL  NVRTC            " + empty + " (found in system) cannot be loaded: "),
              std::string::npos)
        << report.out;
    EXPECT_NE(report.out.find("LD_LIBRARY_PATH"), std::string::npos) << report.out;
    EXPECT_EQ(report.out.find("not on the library path"), std::string::npos) << report.out;
    EXPECT_EQ(report.out.find("caching works"), std::string::npos) << report.out;
    expect_one_verdict_per_check(report.out);
  }
}

// NVRTC loads, but its builtins library does not (an empty one first on the library path): every
// compile fails in NVRTC itself, so nothing can be cached.
TEST(CliDoctor, ASampleCompileThatNvrtcItselfFailsIsAFailure) {
  TempDir home, libraries;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  write_file(libraries.path() + "/libnvrtc-builtins.so.13.0", "");
  env["LD_LIBRARY_PATH"] = libraries.path();
  env["VIRTUAL_ENV"] = std::nullopt;  // the toolkit's NVRTC 13.0, whose builtins these are
  const auto report = cli({"doctor"}, env);
  EXPECT_EQ(report.exit_code, 1) << report.out;
  EXPECT_NE(report.out.find("FAIL  sample compile   NVRTC itself could not compile the sample"), std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find("nvrtcCompileProgram returned 7 (NVRTC_ERROR_BUILTIN_OPERATION_FAILURE)"),
            std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find("LD_LIBRARY_PATH"), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find("caching works"), std::string::npos) << report.out;
  expect_one_verdict_per_check(report.out);
}

// NVRTC_APPEND_FLAGS reaches every compile: an option there that may not be cached (one with side
// effects, one this build does not know) stops caching, and doctor names the variable instead of
// blaming interception.
TEST(CliDoctor, NamesNvrtcAppendFlagsWhenItStopsCaching) {
  TempDir home;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  const std::string side_effect = "--time=" + home.path() + "/time.csv";
  for (const std::string& flags : {side_effect, std::string("--no-such-option")}) {
    env["NVRTC_APPEND_FLAGS"] = flags;
    const auto report = cli({"doctor"}, env);
    EXPECT_EQ(report.exit_code, 1) << report.out;
    EXPECT_NE(report.out.find("FAIL  sample compile   NVRTC_APPEND_FLAGS=\"" + flags + "\" "), std::string::npos)
        << report.out;
    EXPECT_NE(report.out.find("Unset NVRTC_APPEND_FLAGS"), std::string::npos) << report.out;
    EXPECT_EQ(report.out.find("not intercepted"), std::string::npos) << report.out;
    EXPECT_EQ(report.out.find("NVRTC itself could not compile"), std::string::npos) << report.out;
    expect_one_verdict_per_check(report.out);
  }
  EXPECT_NE(cli({"doctor"}, env).out.find("adds an option this build does not know"), std::string::npos);
  env["NVRTC_APPEND_FLAGS"] = side_effect;
  EXPECT_NE(cli({"doctor"}, env).out.find("adds an option with side effects"), std::string::npos);
  env["NVRTC_APPEND_FLAGS"] = "-lineinfo";  // an option that changes nothing about caching
  const auto healthy = cli({"doctor"}, env);
  EXPECT_NE(healthy.out.find("ok    sample compile"), std::string::npos) << healthy.out;
}

TEST(CliDoctor, AHealthySetupHasOneVerdictPerCheck) {
  TempDir home;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  const auto healthy = cli({"doctor", "--no-compile"}, env);
  EXPECT_EQ(healthy.exit_code, 0) << healthy.out;
  expect_one_verdict_per_check(healthy.out);
  ASSERT_EQ(::chmod((home.path() + "/cache").c_str(), 0777), 0);
  const auto refused = cli({"doctor", "--no-compile"}, env);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_EQ(refused.out.find("ok    cache directory"), std::string::npos) << refused.out;
  expect_one_verdict_per_check(refused.out);
}

}  // namespace
}  // namespace nvrtc_cache
