#include <gtest/gtest.h>

#include <map>

#include "core/config.h"

namespace nvrtc_cache::core {
namespace {

Config from(std::map<std::string, std::string> vars) {
  return config_from_environment([vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

TEST(Config, Defaults) {
  const Config c = from({{"HOME", "/home/u"}});
  EXPECT_FALSE(c.disabled);
  EXPECT_EQ(c.cache_dir, "/home/u/.cache/nvrtc-cache");
  EXPECT_EQ(c.max_size_bytes, 5ull << 30);
  EXPECT_EQ(c.log_level, LogLevel::kWarn);
  EXPECT_TRUE(c.log_file.empty());
  EXPECT_TRUE(c.problems.empty());
}

TEST(Config, XdgCacheHomeWins) {
  EXPECT_EQ(from({{"HOME", "/home/u"}, {"XDG_CACHE_HOME", "/xdg"}}).cache_dir, "/xdg/nvrtc-cache");
}

TEST(Config, ExplicitValues) {
  const Config c = from({{"NVRTC_CACHE_DIR", "/c/"}, {"NVRTC_CACHE_DISABLE", "1"}, {"NVRTC_CACHE_MAX_SIZE", "10G"},
                         {"NVRTC_CACHE_LOG", "debug"}, {"NVRTC_CACHE_LOG_FILE", "/tmp/log"}});
  EXPECT_TRUE(c.disabled);
  EXPECT_EQ(c.cache_dir, "/c");
  EXPECT_EQ(c.store_dir(), "/c/store");
  EXPECT_EQ(c.max_size_bytes, 10ull << 30);
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
  EXPECT_EQ(c.log_file, "/tmp/log");
  EXPECT_TRUE(c.problems.empty());
}

TEST(Config, BadValuesGetOneMessageNamingTheVariableAndASafeDefault) {
  const Config c = from({{"HOME", "/h"}, {"NVRTC_CACHE_DIR", "relative"}, {"NVRTC_CACHE_DISABLE", "maybe"},
                         {"NVRTC_CACHE_MAX_SIZE", "lots"}, {"NVRTC_CACHE_LOG", "loud"}});
  ASSERT_EQ(c.problems.size(), 4u);
  EXPECT_NE(c.problems[0].find("NVRTC_CACHE_DISABLE"), std::string::npos);
  EXPECT_NE(c.problems[1].find("NVRTC_CACHE_DIR"), std::string::npos);
  EXPECT_NE(c.problems[2].find("NVRTC_CACHE_MAX_SIZE"), std::string::npos);
  EXPECT_NE(c.problems[3].find("NVRTC_CACHE_LOG"), std::string::npos);
  EXPECT_FALSE(c.disabled);
  EXPECT_EQ(c.cache_dir, "/h/.cache/nvrtc-cache");
  EXPECT_EQ(c.max_size_bytes, 5ull << 30);
  EXPECT_EQ(c.log_level, LogLevel::kWarn);
}

TEST(Config, SharedTiers) {
  const Config unset = from({{"HOME", "/h"}});
  EXPECT_EQ(unset.remote, "");
  EXPECT_EQ(unset.remote_secret_file, "");
  const Config c = from({{"NVRTC_CACHE_REMOTE", "redis://:pw@h file:///mnt/c?read-only"},
                         {"NVRTC_CACHE_REMOTE_SECRET_FILE", "/etc/nvrtc-cache.key"}});
  EXPECT_EQ(c.remote, "redis://:pw@h file:///mnt/c?read-only");  // each URL is checked when the tiers open
  EXPECT_EQ(c.remote_secret_file, "/etc/nvrtc-cache.key");
  EXPECT_TRUE(c.problems.empty());
}

TEST(Config, WaitTimeout) {
  EXPECT_FALSE(from({{"HOME", "/h"}}).wait_timeout) << "unset: the adaptive default";
  EXPECT_EQ(from({{"NVRTC_CACHE_WAIT_TIMEOUT", "30"}}).wait_timeout, std::chrono::seconds(30));
  EXPECT_EQ(from({{"NVRTC_CACHE_WAIT_TIMEOUT", "0.25"}}).wait_timeout, std::chrono::milliseconds(250));
  EXPECT_EQ(from({{"NVRTC_CACHE_WAIT_TIMEOUT", "0"}}).wait_timeout, std::chrono::milliseconds(0));
  for (const char* bad : {"soon", "-1", "10s", "100000", "nan", "inf"}) {
    const Config c = from({{"NVRTC_CACHE_WAIT_TIMEOUT", bad}});
    EXPECT_FALSE(c.wait_timeout) << bad;
    ASSERT_EQ(c.problems.size(), 1u) << bad;
    EXPECT_NE(c.problems[0].find("NVRTC_CACHE_WAIT_TIMEOUT"), std::string::npos);
  }
}

TEST(Config, ParseSize) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("512M"), 512ull << 20);
  EXPECT_EQ(parse_size("10G"), 10ull << 30);
  EXPECT_EQ(parse_size("1.5GiB"), 3ull << 29);
  EXPECT_EQ(parse_size("2tb"), 2ull << 40);
  EXPECT_EQ(parse_size("64k"), 64ull << 10);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("G"));
  EXPECT_FALSE(parse_size("-1G"));
  EXPECT_FALSE(parse_size("0"));
  EXPECT_FALSE(parse_size("10X"));
  EXPECT_FALSE(parse_size("1.2.3G"));
}

}  // namespace
}  // namespace nvrtc_cache::core
