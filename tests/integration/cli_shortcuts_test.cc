// ccache's options as nvrtc-cache takes them, run as processes: each stands for the command it
// names (-s, -z, -s -z, -C, -c, --evict-older-than, -M, -o, -k, -p, -V), and those that mean nothing
// here (-x, -X, -F) say what to use instead.
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

TEST(CliShortcuts, CcachesShortOptionsAreTheCommandsTheyStandFor) {
  TempDir home;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  const std::string user = home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf";

  const auto set = cli({"-M", "10"}, env);  // no unit: GiB
  EXPECT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(read_file(user), "max_size = 10\n");
  EXPECT_EQ(cli({"config", "get", "max_size"}, env).out, "10G\n");
  EXPECT_EQ(cli({"-M1.5G"}, env).exit_code, 0);
  EXPECT_EQ(cli({"config", "get", "max_size"}, env).out, "1536M\n");
  EXPECT_EQ(cli({"--max-size=500M"}, env).exit_code, 0);
  EXPECT_EQ(read_file(user), "max_size = 500M\n");
  const auto missing = cli({"-M"}, env);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("-M needs a SIZE"), std::string::npos) << missing.err;
  EXPECT_EQ(cli({"-M", "lots"}, env).exit_code, 2);

  EXPECT_EQ(cli({"-p"}, env).out, cli({"config"}, env).out);
  const auto shown = cli({"-s"}, env);
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out, cli({"stats"}, env).out);
  EXPECT_NE(shown.out.find("counting since    never zeroed"), std::string::npos) << shown.out;
  EXPECT_TRUE(nlohmann::json::parse(cli({"-s", "--json"}, env).out)["zeroed_at"].is_null());

  const auto zeroed = cli({"-z"}, env);
  EXPECT_EQ(zeroed.exit_code, 0) << zeroed.err;
  EXPECT_NE(zeroed.out.find("statistics zeroed"), std::string::npos) << zeroed.out;
  const nlohmann::json after = nlohmann::json::parse(cli({"stats", "--json"}, env).out);
  ASSERT_TRUE(after["zeroed_at"].is_number()) << after;
  EXPECT_NEAR(after["zeroed_at"].get<double>(), static_cast<double>(std::time(nullptr)), 60);
  EXPECT_NE(cli({"stats"}, env).out.find("(stats -z)"), std::string::npos);
  const auto cleared = cli({"-C"}, env);
  EXPECT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_NE(cleared.out.find("cleared "), std::string::npos) << cleared.out;

  const auto help = cli({"--help"}, env);
  for (const char* option :
       {"-s,--show-stats", "-z,--zero-stats", "-C,--clear", "-M,--max-size", "-p,--show-config", "-V,--version",
        "-o,--set-config", "-k,--get-config", "-c,--cleanup", "--evict-older-than", "-x,--show-compression"}) {
    EXPECT_NE(help.out.find(option), std::string::npos) << option << " in " << help.out;
  }
}

// The rest of ccache's options: -o KEY=VALUE, -k KEY, -c, --evict-older-than AGE and -s -z (shown,
// then zeroed) do what they do in ccache; -x, -X and -F, which mean nothing here, say what to use.
TEST(CliShortcuts, CcachesOtherOptionsWorkOrSayWhatToUse) {
  TempDir home;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  const std::string user = home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf";

  const auto set = cli({"-o", "max_size=10G"}, env);
  EXPECT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(read_file(user), "max_size = 10G\n");
  EXPECT_EQ(cli({"--set-config=compression=3"}, env).exit_code, 0);
  EXPECT_EQ(cli({"-k", "compression"}, env).out, "3\n");
  EXPECT_EQ(cli({"--get-config", "max_size"}, env).out, "10G\n");
  const auto malformed = cli({"-o", "max_size"}, env);
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.err.find("KEY=VALUE"), std::string::npos) << malformed.err;
  EXPECT_EQ(cli({"-c"}, env).exit_code, 0);
  const auto older = cli({"--evict-older-than", "30d"}, env);
  EXPECT_EQ(older.exit_code, 0) << older.err;

  const auto probe_run = testing::probe({"trivial"}, testing::shim_env(home.path() + "/cache"));
  ASSERT_EQ(probe_run.exit_code, 0) << probe_run.err;
  for (const std::vector<std::string>& show_and_zero :
       {std::vector<std::string>{"-s", "-z"}, {"-sz"}, {"--zero-stats", "-s"}, {"--show-stats", "--zero-stats"}}) {
    const auto shown = cli(show_and_zero, env);
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_NE(shown.out.find("compiles (NVRTC)  "), std::string::npos) << "not shown: " << shown.out;
    EXPECT_NE(shown.out.find("statistics zeroed"), std::string::npos) << "not zeroed: " << shown.out;
    EXPECT_EQ(nlohmann::json::parse(cli({"stats", "--json"}, env).out).value("misses", -1), 0);
  }

  for (const char* unsupported : {"-x", "-F", "-X"}) {
    std::vector<std::string> args = {unsupported};
    if (std::string(unsupported) != "-x") args.push_back("5");
    const auto r = cli(args, env);
    EXPECT_EQ(r.exit_code, 2) << unsupported;
    EXPECT_NE(r.err.find("is not supported here: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nvrtc-cache"), std::string::npos) << "says what to use instead: " << r.err;
  }
}

}  // namespace
}  // namespace nvrtc_cache
