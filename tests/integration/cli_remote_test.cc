// `nvrtc-cache remote check|evict` and doctor's shared-tier line, run as processes against a real
// redis-server (tests/support/redis_server.h) and a real shared directory.
#include <gtest/gtest.h>
#include <sys/time.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"

namespace nvrtc_cache {
namespace {

using testing::cli;
using testing::EnvVars;
using testing::RedisServer;
using testing::run_process;
using testing::TempDir;
namespace fs = std::filesystem;

// A user with no configuration files and `remote` set to `remote`.
EnvVars remote_env(const TempDir& home, const std::string& remote) {
  return {{"HOME", home.path()},
          {"XDG_CONFIG_HOME", std::nullopt},
          {"XDG_CACHE_HOME", std::nullopt},
          {"NVRTC_CACHE_SYSTEM_CONFIG", home.path() + "/system.conf"},
          {"NVRTC_CACHE_DIR", home.path() + "/cache"},
          {"NVRTC_CACHE_REMOTE", remote}};
}

TEST(CliRemote, CheckALiveAWrongPasswordAndAStoppedRedis) {
  TempDir home;
  RedisServer server;
  ASSERT_TRUE(server.ok());

  const auto live = cli({"remote", "check"}, remote_env(home, server.url()));
  EXPECT_EQ(live.exit_code, 0) << live.out << live.err;
  EXPECT_NE(live.out.find("reachable   yes"), std::string::npos) << live.out;
  EXPECT_NE(live.out.find("access      writable"), std::string::npos) << live.out;
  EXPECT_NE(live.out.find(" ms\n"), std::string::npos) << live.out;
  EXPECT_NE(live.out.find("values      unsigned: whoever can write to it decides"), std::string::npos) << live.out;
  EXPECT_NE(live.out.find("***"), std::string::npos) << "the password is not masked: " << live.out;
  EXPECT_EQ((live.out + live.err).find(server.password()), std::string::npos);
  EXPECT_EQ(live.err, "");

  const auto json = cli({"remote", "check", "--json"}, remote_env(home, server.url()));
  EXPECT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["tiers"].size(), 1u);
  EXPECT_EQ(j["tiers"][0]["reachable"], true);
  EXPECT_EQ(j["tiers"][0]["writable"], true);
  EXPECT_EQ(j["tiers"][0]["ok"], true);
  EXPECT_EQ(j["tiers"][0]["signed"], false);
  EXPECT_GE(j["tiers"][0]["round_trip_ms"].get<double>(), 0.0);
  EXPECT_EQ(j["ok"], true);

  const auto read_only = cli({"remote", "check"}, remote_env(home, server.url() + "?read-only"));
  EXPECT_EQ(read_only.exit_code, 0) << read_only.out << read_only.err;
  EXPECT_NE(read_only.out.find("access      read-only"), std::string::npos) << read_only.out;

  const auto doctor = cli({"doctor", "--no-compile"}, remote_env(home, server.url()));
  EXPECT_NE(doctor.out.find("reachable and writable"), std::string::npos) << doctor.out;
  EXPECT_NE(doctor.out.find("is unsigned: whoever can write to it decides"), std::string::npos) << doctor.out;
  {
    const std::string secret_file = home.path() + "/secret";
    std::ofstream(secret_file) << "a shared secret of the fleet, long enough\n";
    ASSERT_EQ(::chmod(secret_file.c_str(), 0600), 0);
    EnvVars signed_env = remote_env(home, server.url());
    signed_env["NVRTC_CACHE_REMOTE_SECRET_FILE"] = secret_file;
    const auto signed_check = cli({"remote", "check"}, signed_env);
    EXPECT_EQ(signed_check.exit_code, 0) << signed_check.out << signed_check.err;
    EXPECT_NE(signed_check.out.find("values      signed"), std::string::npos) << signed_check.out;
    const auto signed_doctor = cli({"doctor", "--no-compile"}, signed_env);
    EXPECT_EQ(signed_doctor.out.find("is unsigned"), std::string::npos) << signed_doctor.out;
  }
  EXPECT_EQ(doctor.out.find(server.password()), std::string::npos);

  const std::string wrong_url = "redis://:wrong-pass-5e1d@127.0.0.1:" + std::to_string(server.port());
  const auto wrong = cli({"remote", "check"}, remote_env(home, wrong_url));
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out << wrong.err;
  const std::string said = wrong.out + wrong.err;
  EXPECT_EQ(said.find("wrong-pass-5e1d"), std::string::npos) << said;
  EXPECT_NE(said.find("password"), std::string::npos) << "no clear message: " << said;

  server.stop();
  const auto stopped = cli({"remote", "check"}, remote_env(home, server.url()));
  EXPECT_EQ(stopped.exit_code, 1) << stopped.out << stopped.err;
  EXPECT_NE(stopped.out.find("reachable   no"), std::string::npos) << stopped.out;
  EXPECT_NE(stopped.out.find("message     "), std::string::npos) << stopped.out;
  EXPECT_NE(stopped.err.find("a shared tier is not usable"), std::string::npos) << stopped.err;
  const auto doctor_stopped = cli({"doctor", "--no-compile"}, remote_env(home, server.url()));
  EXPECT_NE(doctor_stopped.out.find("is unreachable"), std::string::npos) << doctor_stopped.out;

  const auto none = cli({"remote", "check"}, remote_env(home, ""));
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_EQ(none.out, "no shared tiers configured (remote)\n");
  const auto malformed = cli({"remote", "check"}, remote_env(home, "redis://:hunter2@[::1"));
  EXPECT_EQ(malformed.exit_code, 1);
  EXPECT_EQ((malformed.out + malformed.err).find("hunter2"), std::string::npos) << malformed.err;
}

// A cluster URL whose nodes give no map (here a plain Redis: CLUSTER NODES is refused) cannot be
// read: an export from it fails and writes no archive, instead of an empty one marked complete.
TEST(CliRemote, ExportFromAClusterNoNodeOfWhichAnswersFails) {
  TempDir home;
  RedisServer server;
  ASSERT_TRUE(server.ok());
  std::string url = server.url();
  ASSERT_TRUE(url.starts_with("redis://")) << url;
  url.replace(0, 5, "redis+cluster");
  const std::string archive = home.path() + "/a.nvrc";
  const auto exported = cli({"export", archive, "--from", url}, remote_env(home, ""));
  EXPECT_EQ(exported.exit_code, 1) << exported.out << exported.err;
  EXPECT_NE((exported.out + exported.err).find("no node of the cluster answered"), std::string::npos)
      << exported.out << exported.err;
  EXPECT_FALSE(fs::exists(archive));
}

TEST(CliRemote, EvictTrimsAFileTierOldestFirst) {
  TempDir home;
  const std::string tier = home.path() + "/tier";
  std::vector<std::string> files;
  for (int i = 0; i < 4; ++i) {
    const std::string bucket = "0" + std::to_string(i);
    const std::string dir = tier + "/nvrtc-cache/" + bucket;
    fs::create_directories(dir);
    files.push_back(dir + "/" + bucket + std::string(30, static_cast<char>('a' + i)));  // the tier's names
    std::ofstream(files.back(), std::ios::binary) << std::string(1000, 'x');
    const struct timeval times[2] = {{1'000'000 + i * 1000, 0}, {1'000'000 + i * 1000, 0}};  // file i is older than i+1
    ASSERT_EQ(utimes(files.back().c_str(), times), 0);
  }
  const auto evicted = cli({"remote", "evict", "file://" + tier, "--max-size", "2500B"}, remote_env(home, ""));
  EXPECT_EQ(evicted.exit_code, 0) << evicted.out << evicted.err;
  EXPECT_NE(evicted.out.find("removed 2 of 4 files"), std::string::npos) << evicted.out;
  EXPECT_FALSE(fs::exists(files[0]));
  EXPECT_FALSE(fs::exists(files[1]));
  EXPECT_TRUE(fs::exists(files[2]));
  EXPECT_TRUE(fs::exists(files[3]));

  const auto not_a_size = cli({"remote", "evict", "file://" + tier, "--max-size", "lots"}, remote_env(home, ""));
  EXPECT_EQ(not_a_size.exit_code, 2);
  const auto not_a_file_tier =
      cli({"remote", "evict", "redis://:pw-3c9@127.0.0.1", "--max-size", "1M"}, remote_env(home, ""));
  EXPECT_EQ(not_a_file_tier.exit_code, 1);
  EXPECT_NE(not_a_file_tier.err.find("remote evict: not a file:// tier"), std::string::npos) << not_a_file_tier.err;
  EXPECT_EQ(not_a_file_tier.err.find("pw-3c9"), std::string::npos) << not_a_file_tier.err;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"remote", "--help"}, std::vector<std::string>{"remote", "check", "--help"},
        std::vector<std::string>{"remote", "evict", "--help"}}) {
    const auto help = cli(args, {});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("Usage:"), std::string::npos) << help.out;
  }
}

// Entries of the tier's own names, in real buckets and in a bucket that is a link to the victim's
// directory: `remote evict --max-size 1B` empties the real buckets, says once that it skipped the
// link, and deletes nothing in the victim's directory, nor a file of another name in a real bucket.
TEST(CliRemote, EvictNeverFollowsALinkedBucketNorRemovesForeignFiles) {
  TempDir home;
  const std::string tier = home.path() + "/tier";
  const std::string victim = home.path() + "/documents";
  fs::create_directories(victim);
  std::ofstream(victim + "/thesis.tex") << "years of work";
  std::ofstream(victim + "/ab" + std::string(30, '1')) << "named like an entry";
  std::vector<std::string> entries;
  for (const std::string bucket : {"00", "7f", "ff"}) {
    fs::create_directories(tier + "/nvrtc-cache/" + bucket);
    entries.push_back(tier + "/nvrtc-cache/" + bucket + "/" + bucket + std::string(30, 'c'));
    std::ofstream(entries.back()) << std::string(1000, 'x');
  }
  const std::string foreign = tier + "/nvrtc-cache/7f/README";
  std::ofstream(foreign) << "not an entry";
  fs::create_directory_symlink(victim, tier + "/nvrtc-cache/ab");

  const auto evicted = cli({"remote", "evict", "file://" + tier, "--max-size", "1B"}, remote_env(home, ""));
  EXPECT_EQ(evicted.exit_code, 0) << evicted.out << evicted.err;
  EXPECT_NE(evicted.out.find("removed 3 of 3 files"), std::string::npos) << evicted.out;
  for (const std::string& entry : entries) EXPECT_FALSE(fs::exists(entry)) << entry;
  EXPECT_NE(evicted.err.find("skipped 1 bucket directory"), std::string::npos) << evicted.err;
  EXPECT_NE(evicted.err.find("nvrtc-cache/ab is a symbolic link (not followed)"), std::string::npos) << evicted.err;
  EXPECT_EQ(std::count(evicted.err.begin(), evicted.err.end(), '\n'), 1) << evicted.err;
  EXPECT_TRUE(fs::exists(victim + "/thesis.tex"));
  EXPECT_TRUE(fs::exists(victim + "/ab" + std::string(30, '1')));
  EXPECT_TRUE(fs::exists(foreign));
  EXPECT_TRUE(fs::is_symlink(tier + "/nvrtc-cache/ab"));
}

}  // namespace
}  // namespace nvrtc_cache
