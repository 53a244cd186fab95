#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/config.h"
#include "core/settings.h"

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
  const Config c = from({{"NVRTC_CACHE_DIR", "/c/"},
                         {"NVRTC_CACHE_DISABLE", "1"},
                         {"NVRTC_CACHE_MAX_SIZE", "10G"},
                         {"NVRTC_CACHE_LOG", "debug"},
                         {"NVRTC_CACHE_LOG_FILE", "/tmp/log"}});
  EXPECT_TRUE(c.disabled);
  EXPECT_EQ(c.cache_dir, "/c");
  EXPECT_EQ(c.store_dir(), "/c/store");
  EXPECT_EQ(c.max_size_bytes, 10ull << 30);
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
  EXPECT_EQ(c.log_file, "/tmp/log");
  EXPECT_TRUE(c.problems.empty());
}

TEST(Config, BadValuesGetOneMessageNamingTheVariableAndASafeDefault) {
  const Config c = from({{"HOME", "/h"},
                         {"NVRTC_CACHE_DIR", "relative"},
                         {"NVRTC_CACHE_DISABLE", "maybe"},
                         {"NVRTC_CACHE_MAX_SIZE", "lots"},
                         {"NVRTC_CACHE_LOG", "loud"}});
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

TEST(Config, LogLevelsAreCaseInsensitive) {
  for (const char* spelling : {"debug", "DEBUG", "Debug"}) {
    const Config c = from({{"HOME", "/h"}, {"NVRTC_CACHE_LOG", spelling}});
    EXPECT_TRUE(c.problems.empty()) << spelling;
    EXPECT_EQ(c.log_level, LogLevel::kDebug) << spelling;
  }
  EXPECT_EQ(from({{"HOME", "/h"}, {"NVRTC_CACHE_LOG", "Info"}}).log_level, LogLevel::kInfo);
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
  EXPECT_EQ(parse_size("4096B"), 4096u);
  EXPECT_EQ(parse_size("10"), 10ull << 30) << "no unit: GiB, as ccache";
  EXPECT_EQ(parse_size("0.5"), 1ull << 29);
  EXPECT_EQ(parse_size("10Gi"), 10ull << 30);
  EXPECT_EQ(parse_size("500M"), 500ull << 20);
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

// Defaults < system file < user file < environment, with the files given by a reader (no disk).
Config layered(std::map<std::string, std::string> vars, std::map<std::string, std::string> files) {
  return load_config(
      [vars](const char* name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
      },
      [files](const std::string& path) -> std::optional<std::string> {
        auto it = files.find(path);
        if (it == files.end()) return std::nullopt;
        return it->second;
      });
}

std::string origin_of(const Config& c, const char* key) { return c.origins[setting_index(*find_setting(key))]; }

TEST(Config, FilesAndEnvironmentInPrecedence) {
  const std::map<std::string, std::string> vars = {{"HOME", "/h"}};
  const std::string user = "/h/.config/nvrtc-cache/nvrtc-cache.conf";
  const std::map<std::string, std::string> files = {
      {"/etc/nvrtc-cache.conf", "# system\nmax_size = 1G\nlog = info\nshared = 1\n"},
      {user, "\n  # mine\nmax_size=2G\n   log   =   debug   \n"}};
  Config c = layered(vars, files);
  EXPECT_TRUE(c.problems.empty()) << c.problems.front();
  EXPECT_EQ(c.max_size_bytes, 2ull << 30);
  EXPECT_EQ(origin_of(c, "max_size"), user + ":3");
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
  EXPECT_EQ(origin_of(c, "log"), user + ":4");
  EXPECT_TRUE(c.shared);
  EXPECT_EQ(origin_of(c, "shared"), "/etc/nvrtc-cache.conf:4");
  EXPECT_EQ(origin_of(c, "disable"), "default");

  auto with_env = vars;
  with_env["NVRTC_CACHE_MAX_SIZE"] = "3G";
  c = layered(with_env, files);
  EXPECT_EQ(c.max_size_bytes, 3ull << 30);
  EXPECT_EQ(origin_of(c, "max_size"), "environment NVRTC_CACHE_MAX_SIZE");

  // XDG_CONFIG_HOME names the user file's directory; NVRTC_CACHE_CONFIG names the file itself; and
  // NVRTC_CACHE_SYSTEM_CONFIG the system file.
  EXPECT_EQ(config_paths([](const char* n) -> std::optional<std::string> {
              if (std::string(n) == "XDG_CONFIG_HOME") return "/x";
              return std::nullopt;
            }).user,
            "/x/nvrtc-cache/nvrtc-cache.conf");
  c = layered({{"HOME", "/h"}, {"NVRTC_CACHE_CONFIG", "/other.conf"}, {"NVRTC_CACHE_SYSTEM_CONFIG", "/sys.conf"}},
              {{"/other.conf", "max_size = 7M\n"}, {"/sys.conf", "log = error\n"}, {user, "max_size = 9M\n"}});
  EXPECT_EQ(c.max_size_bytes, 7ull << 20);
  EXPECT_EQ(c.log_level, LogLevel::kError);
}

TEST(Config, ABadFileValueNamesTheSettingTheFileAndLineAndTheValueUsed) {
  const std::string user = "/h/.config/nvrtc-cache/nvrtc-cache.conf";
  const Config c = layered({{"HOME", "/h"}}, {{"/etc/nvrtc-cache.conf", "max_size = 1G\n"},
                                              {user, "max_size = lots\nbogus = 1\nno equals sign\nlog = loud\n"}});
  ASSERT_EQ(c.problems.size(), 4u);
  EXPECT_EQ(c.problems[0], user +
                               ":1: max_size='lots' is not a size of at least 1M (e.g. 10G, 512M); using 1G "
                               "(/etc/nvrtc-cache.conf:1)");
  EXPECT_NE(c.problems[1].find(user + ":2: unknown setting 'bogus'"), std::string::npos) << c.problems[1];
  EXPECT_NE(c.problems[2].find(user + ":3: "), std::string::npos) << c.problems[2];
  EXPECT_EQ(c.problems[3], user + ":4: log='loud' is not one of off|error|warn|info|debug; using warn (default)");
  EXPECT_EQ(c.max_size_bytes, 1ull << 30);
  EXPECT_EQ(c.log_level, LogLevel::kWarn);
}

TEST(Config, EverySettingIsInTheTableAndRoundTripsThroughShow) {
  for (const SettingSpec& s : settings()) {
    EXPECT_EQ(find_setting(s.key), &s);
    EXPECT_EQ(find_setting(s.env), &s);
    EXPECT_TRUE(s.env.starts_with("NVRTC_CACHE_")) << s.env;
    EXPECT_FALSE(s.help.empty()) << s.key;
  }
  const Config c = from({{"NVRTC_CACHE_DIR", "/c"},
                         {"NVRTC_CACHE_MAX_SIZE", "1536M"},
                         {"NVRTC_CACHE_WAIT_TIMEOUT", "2.5"},
                         {"NVRTC_CACHE_REMOTE", "redis://:secret@host:6379/0"},
                         {"NVRTC_CACHE_REMOTE_SECRET_FILE", "/k"}});
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(find_setting("max_size")->show(c), "1536M");
  EXPECT_EQ(find_setting("wait_timeout")->show(c), "2.5");
  EXPECT_EQ(c.remote, "redis://:secret@host:6379/0");
  EXPECT_EQ(find_setting("remote")->show(c), "redis://:***@host:6379/0") << "passwords are never shown";
  EXPECT_EQ(c.remote_secret_file, "/k");
  for (const SettingSpec& s : settings()) {  // what show() prints, apply() accepts, to the same value
    const std::string shown = s.show(c);
    if (shown.empty()) continue;
    Config again;
    EXPECT_FALSE(s.apply(again, shown)) << s.key << " = " << shown;
    if (s.key != "remote") {
      EXPECT_EQ(s.show(again), shown) << s.key;
    }
  }
}

// Every URL of `remote` shows through shown_urls: a password holding '/', '?', '#', '@' or
// percent-encoding, in any kind of URL, never shows in `config` or in a problem about the value.
TEST(Settings, RemotePasswordsNeverShowWhateverTheyHold) {
  const std::string list =
      "redis://:pw7a/b9c@h1 rediss://u:pw7a?b9c@h2:6380 redis+cluster://:pw7a#b9c@h3:7000 "
      "http://ci:pw7a/b9c@h4/c https://ci:pw7a#b9c@h5 http://ci:pw7a%2Fb9c@h6 redis+unix://:pw7a/b9c@/run/r.sock";
  const Config c = from({{"NVRTC_CACHE_REMOTE", list}});
  EXPECT_TRUE(c.problems.empty());
  const std::string shown = find_setting("remote")->show(c);
  EXPECT_EQ(shown,
            "redis://:***@h1 rediss://u:***@h2:6380 redis+cluster://:***@h3:7000 http://ci:***@h4/c "
            "https://ci:***@h5 http://ci:***@h6 redis+unix://:***@/run/r.sock");
  EXPECT_EQ(shown_value(*find_setting("remote"), "file:///a@b  redis://:pw7a/b9c@h"), "file:///a@b  redis://:***@h");
  EXPECT_EQ(shown_value(*find_setting("cache_dir"), "/x@y/pw7a"), "/x@y/pw7a");
  const Config bad = from({{"NVRTC_CACHE_REMOTE", ":pw7a/b9c@h1"}});  // no scheme: refused, masked
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_EQ(bad.problems[0].find("pw7a"), std::string::npos) << bad.problems[0];
  EXPECT_EQ(bad.problems[0].find("b9c"), std::string::npos) << bad.problems[0];
}

// ---- Configuration files on disk (read_config_file) ----

struct ConfigDir {
  std::string path;
  ConfigDir() {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/nvrtc-cache-config-XXXXXX";
    path = ::mkdtemp(pattern.data());
  }
  ~ConfigDir() { std::filesystem::remove_all(path); }
};

Config from_user_file(const std::string& path) {
  return load_config([path](const char* name) -> std::optional<std::string> {
    if (std::string(name) == "NVRTC_CACHE_CONFIG") return path;
    if (std::string(name) == "NVRTC_CACHE_SYSTEM_CONFIG") return "/nonexistent/nvrtc-cache.conf";
    return std::nullopt;
  });
}

// A FIFO named as the configuration file is refused at once (a blocking open would hang the host's
// first NVRTC call until someone wrote to it), with one message.
TEST(ConfigFile, AFifoIsRefusedWithoutWaiting) {
  ConfigDir dir;
  const std::string fifo = dir.path + "/nvrtc-cache.conf";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const Config c = from_user_file(fifo);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0], fifo + " is not a regular file; ignored");
}

TEST(ConfigFile, AnOversizedFileIsReportedNotSilentlyIgnored) {
  ConfigDir dir;
  const std::string path = dir.path + "/nvrtc-cache.conf";
  std::ofstream(path) << "max_size = 64M\n" << std::string(2 << 20, '#');
  const Config c = from_user_file(path);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find("is larger than 1048576 bytes; ignored"), std::string::npos) << c.problems[0];
  EXPECT_EQ(c.max_size_bytes, 5ull << 30);  // the default
}

// Garbage in a configuration file costs a few lines, whatever its size: three about lines, then one
// that counts the rest; control bytes are not echoed.
TEST(ConfigFile, GarbageCostsAFewLinesAtMost) {
  ConfigDir dir;
  const std::string path = dir.path + "/nvrtc-cache.conf";
  std::string garbage;
  for (int i = 0; i < 65536; ++i) garbage.push_back(static_cast<char>((i * 7919) % 251 + 1));
  std::ofstream(path) << garbage << "\nmax_size = 64M\n";
  const Config c = from_user_file(path);
  ASSERT_LE(c.problems.size(), 4u);
  ASSERT_GE(c.problems.size(), 2u);
  EXPECT_NE(c.problems.back().find("more lines that are not settings; ignored"), std::string::npos)
      << c.problems.back();
  for (const std::string& p : c.problems) {
    EXPECT_LT(p.size(), 300u);
    for (char ch : p) EXPECT_FALSE(static_cast<unsigned char>(ch) < 0x20) << p;
  }
  EXPECT_EQ(c.max_size_bytes, 64ull << 20);
}

}  // namespace
}  // namespace nvrtc_cache::core

namespace nvrtc_cache::core {
namespace {

EnvLookup lookup_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(Config, PathsExpandTildeAndVariablesAsCcacheDoes) {
  const EnvLookup env = lookup_of({{"HOME", "/home/u"}, {"TEAM", "gpu"}, {"EMPTY", ""}});
  std::optional<std::string> problem;
  EXPECT_EQ(expand_path("~", env, &problem), "/home/u");
  EXPECT_EQ(expand_path("~/c", env, &problem), "/home/u/c");
  EXPECT_EQ(expand_path("/a/~/b", env, &problem), "/a/~/b") << "only a leading ~";
  EXPECT_EQ(expand_path("~other/x", env, &problem), "~other/x");
  EXPECT_EQ(expand_path("/c/$TEAM/x", env, &problem), "/c/gpu/x");
  EXPECT_EQ(expand_path("/c/${TEAM}x", env, &problem), "/c/gpux");
  EXPECT_EQ(expand_path("/c/$TEAM_x", env, &problem), std::nullopt) << "the name runs to the first non-name character";
  EXPECT_EQ(expand_path("/price$", env, &problem), "/price$");
  EXPECT_EQ(expand_path("/a$/b", env, &problem), "/a$/b");
  problem.reset();
  EXPECT_EQ(expand_path("/c/$NOPE", env, &problem), std::nullopt);
  EXPECT_EQ(problem, "names $NOPE, which is not set");
  problem.reset();
  EXPECT_EQ(expand_path("/c/$EMPTY", env, &problem), std::nullopt) << "an empty variable is not a path";
  problem.reset();
  EXPECT_EQ(expand_path("/c/${TEAM", env, &problem), std::nullopt);
  EXPECT_TRUE(problem);
  problem.reset();
  EXPECT_EQ(expand_path("~/x", lookup_of({}), &problem), std::nullopt);
  EXPECT_TRUE(problem);

  const Config c = config_from_environment(lookup_of({{"HOME", "/home/u"},
                                                      {"TEAM", "gpu"},
                                                      {"NVRTC_CACHE_DIR", "~/caches/${TEAM}"},
                                                      {"NVRTC_CACHE_RECORD", "$HOME/r.rec"}}));
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.cache_dir, "/home/u/caches/gpu");
  EXPECT_EQ(c.record_file, "/home/u/r.rec");
  const Config bad = config_from_environment(lookup_of({{"HOME", "/home/u"}, {"NVRTC_CACHE_DIR", "$NOPE/c"}}));
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_EQ(bad.problems[0],
            "NVRTC_CACHE_DIR='$NOPE/c' names $NOPE, which is not set; using /home/u/.cache/nvrtc-cache (default)");
}

TEST(Config, MisspelledVariablesAndKeysHaveASuggestion) {
  EXPECT_EQ(suggest_variable("NVRTC_CACHE_MAXSIZE"), "NVRTC_CACHE_MAX_SIZE");
  EXPECT_EQ(suggest_variable("NVRTC_CACHE_DIRECTORY"), "");
  EXPECT_EQ(suggest_variable("NVRTC_CACHE_DIRR"), "NVRTC_CACHE_DIR");
  EXPECT_EQ(suggest_variable("NVRTC_CACHE_LOGFILE"), "NVRTC_CACHE_LOG_FILE");
  EXPECT_EQ(suggest_variable("NVRTC_CACHE_REMOTE_SECRET"), "NVRTC_CACHE_REMOTE_SECRET_FILE");
  EXPECT_EQ(suggest_variable("NVRTC_CACHE_REAL_NVTRC"), "NVRTC_CACHE_REAL_NVRTC");
  EXPECT_EQ(suggest_variable("NVRTC_CACHE_DISABLED"), "NVRTC_CACHE_DISABLE");
  EXPECT_EQ(suggest_variable("NVRTC_CACHE_MAX_SIZE"), "") << "known";
  // The test suite's own variables are not taken for misspellings.
  for (const char* other : {"NVRTC_CACHE_TEST_PYTHON", "NVRTC_CACHE_TEST_NVRTC12", "NVRTC_CACHE_TEST_NVRTC13",
                            "NVRTC_CACHE_REQUIRE_PYPI", "NVRTC_CACHE_TEST_RUNNER", "NVRTC_CACHE_SEED_VAR"}) {
    EXPECT_EQ(suggest_variable(other), "") << other;
  }
  EXPECT_TRUE(is_known_variable("NVRTC_CACHE_CONFIG"));
  EXPECT_TRUE(is_known_variable("NVRTC_CACHE_SHIM"));
  EXPECT_FALSE(is_known_variable("NVRTC_CACHE_MAXSIZE"));
  EXPECT_EQ(suggest_key("max_sise"), "max_size");
  EXPECT_EQ(suggest_key("maxsize"), "max_size");
  EXPECT_EQ(suggest_key("NVRTC_CACHE_LOG"), "log");
  EXPECT_EQ(suggest_key("NVRTC_CACHE_MAXSIZE"), "max_size");
  EXPECT_EQ(suggest_key("colour"), "");
}

TEST(Config, AnUnknownKeyInAFileGetsDidYouMean) {
  const Config c = load_config(lookup_of({{"HOME", "/h"}, {"NVRTC_CACHE_SYSTEM_CONFIG", "/sys.conf"}}),
                               [](const std::string& path) -> ConfigFileText {
                                 if (path == "/sys.conf") return std::optional<std::string>("cache_dri = /x\n");
                                 return {};
                               });
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0],
            "/sys.conf:1: unknown setting 'cache_dri'; did you mean 'cache_dir'? (`nvrtc-cache config` lists them); "
            "ignored");
}

}  // namespace
}  // namespace nvrtc_cache::core
