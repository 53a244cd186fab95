// The nvrtc-cache command run as a process: configuration files and their precedence, `config set`,
// statistics by reason after real compiles, `stats -z`, ls/inspect/extract against the real
// NVRTC's bytes, doctor in a healthy and a broken setup, the progress bar on a terminal and not
// when piped, and --help / man page / completion generated from the same definitions; the README and
// docs/: the configuration page generated from the settings table, every link resolving.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/lmdb/lmdb_store.h"
#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache {
namespace {

using testing::cli;
using testing::EnvVars;
using testing::probe;
using testing::read_file;
using testing::run_process;
using testing::shim_env;
using testing::TempDir;
using testing::user_env;
using testing::write_file;

// `config set` never writes through a path another user could have prepared: its temporary file is
// created exclusively under a random name, so a link planted at "<file>.tmp" is left alone.
TEST(CliConfig, SetNeverWritesThroughAPlantedLink) {
  TempDir home;
  const EnvVars env = user_env(home);
  const std::string user = home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf";
  const std::string victim = home.path() + "/victim.txt";
  write_file(victim, "the victim's bytes\n");
  write_file(user, "log = info\n");
  ASSERT_EQ(::symlink(victim.c_str(), (user + ".tmp").c_str()), 0);
  const auto set = cli({"config", "set", "max_size", "64M"}, env);
  EXPECT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(read_file(victim), "the victim's bytes\n");
  EXPECT_EQ(read_file(user), "log = info\nmax_size = 64M\n");
  struct stat st {};
  ASSERT_EQ(::stat(user.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::size_t leftovers = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(user).parent_path())) {
    leftovers += e.path().filename().string().starts_with("nvrtc-cache.conf.") ? 1 : 0;
  }
  EXPECT_EQ(leftovers, 1u) << "only the planted link";
}

// A configuration or log file that is a FIFO never hangs the host's first NVRTC call: it is refused
// at once, with one message, and the compile is exact.
TEST(CliConfig, FifosAsConfigurationOrLogFileNeverHangTheHost) {
  TempDir home, cache;
  const std::string fifo = home.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const testing::ProcessResult direct = probe({"trivial"}, {});
  for (const char* variable : {"NVRTC_CACHE_CONFIG", "NVRTC_CACHE_LOG_FILE"}) {
    SCOPED_TRACE(variable);
    EnvVars env = shim_env(cache.path());
    env[variable] = fifo;
    const testing::ProcessResult run = testing::run_process({NVRTC_PROBE_PATH, "trivial"}, env, "", 60);
    EXPECT_FALSE(run.timed_out);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, direct.out);
    EXPECT_NE(run.err.find(fifo + " is not a regular file"), std::string::npos) << run.err;
  }
}

// The compile record and the log file are the user's own: a file another user created (even 0666) is
// never appended to, and a link is never followed.
TEST(CliConfig, RecordAndLogFilesAreNeverAnotherUsersOrALink) {
  if (::geteuid() != 0) {
    if (testing::pypi_required()) FAIL() << "needs root to give a file to another user";
    GTEST_SKIP() << "needs root to give a file to another user";
  }
  TempDir dir, cache;
  const std::string foreign = dir.path() + "/foreign";
  write_file(foreign, "");
  ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(foreign.c_str(), 0666), 0);
  const std::string victim = dir.path() + "/victim";
  write_file(victim, "mine\n");
  const std::string link = dir.path() + "/link";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  for (const std::string& target : {foreign, link}) {
    SCOPED_TRACE(target);
    EnvVars env = shim_env(cache.path());
    const auto recorded = cli({"run", "--record", target, "--", NVRTC_PROBE_PATH, "trivial"}, env);
    EXPECT_EQ(recorded.exit_code, 0) << recorded.err;
    EXPECT_NE(recorded.err.find("cannot append to the record file " + target), std::string::npos) << recorded.err;
    env["NVRTC_CACHE_LOG_FILE"] = target;
    env["NVRTC_CACHE_LOG"] = "debug";
    const testing::ProcessResult logged = probe({"trivial"}, env);
    EXPECT_EQ(logged.exit_code, 0) << logged.err;
    EXPECT_NE(logged.err.find("log_file " + target), std::string::npos) << logged.err;
  }
  EXPECT_EQ(read_file(foreign), "");
  EXPECT_EQ(read_file(victim), "mine\n");
}

TEST(CliConfig, PrecedenceIsEnvironmentThenUserFileThenSystemFileThenDefault) {
  TempDir home;
  EnvVars env = user_env(home);
  const std::string user = home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf";
  const std::string system = home.path() + "/system.conf";
  EXPECT_EQ(cli({"config", "get", "max_size"}, env).out, "5G\n");  // default
  write_file(system, "# the site's settings\nmax_size = 64M\nlog = info\n");
  EXPECT_EQ(cli({"config", "get", "max_size"}, env).out, "64M\n");
  write_file(user, "max_size = 128M\n");
  EXPECT_EQ(cli({"config", "get", "max_size"}, env).out, "128M\n");
  EXPECT_EQ(cli({"config", "get", "log"}, env).out, "info\n");  // the user file leaves it to the system file
  env["NVRTC_CACHE_MAX_SIZE"] = "256M";
  EXPECT_EQ(cli({"config", "get", "max_size"}, env).out, "256M\n");
  const auto listed = cli({"config"}, env);
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("(environment NVRTC_CACHE_MAX_SIZE) max_size = 256M"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("(" + system + ":3) log = info"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("(default) disable = 0"), std::string::npos) << listed.out;
  // NVRTC_CACHE_CONFIG names another user file.
  write_file(home.path() + "/other.conf", "max_size = 32M\n");
  env.erase("NVRTC_CACHE_MAX_SIZE");
  env["NVRTC_CACHE_CONFIG"] = home.path() + "/other.conf";
  EXPECT_EQ(cli({"config", "get", "max_size"}, env).out, "32M\n");
}

TEST(CliConfig, ABadValueSaysTheSettingFileLineAndTheValueUsed) {
  TempDir home;
  const EnvVars env = user_env(home);
  const std::string user = home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf";
  write_file(home.path() + "/system.conf", "max_size = 64M\n");
  write_file(user, "# mine\n\nmax_size = lots\n");
  const auto result = cli({"config", "get", "max_size"}, env);
  EXPECT_EQ(result.out, "64M\n");
  const auto listed = cli({"config"}, env);
  EXPECT_NE(listed.err.find(user + ":3: max_size='lots' is not a size of at least 1M (e.g. 10G, 512M); using 64M (" +
                            home.path() + "/system.conf:1)"),
            std::string::npos)
      << listed.err;
  // The shim reads the same files and says the same, once, on stderr.
  write_file(user, "log = loud\n");
  TempDir cache;
  EnvVars shimmed = shim_env(cache.path());
  shimmed.insert(env.begin(), env.end());
  const auto probed = probe({"trivial"}, shimmed);
  EXPECT_EQ(probed.exit_code, 0);
  EXPECT_NE(probed.err.find(user + ":1: log='loud' is not one of off|error|warn|info|debug; using warn (default)"),
            std::string::npos)
      << probed.err;
}

TEST(CliConfig, TheShimTakesItsSettingsFromTheUserFile) {
  TempDir home, cache;
  EnvVars env = user_env(home);
  write_file(home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf", "cache_dir = " + cache.path() + "\n");
  env["LD_PRELOAD"] = NVRTC_CACHE_SHIM_PATH;
  ASSERT_EQ(probe({"trivial"}, env).exit_code, 0);
  EXPECT_EQ(testing::get(testing::counters_of(cache.path()), "stores"), 1) << "the file's cache_dir was used";
}

TEST(CliConfig, SetWritesTheUserFileAndKeepsEverythingElse) {
  TempDir home;
  const EnvVars env = user_env(home);
  const std::string user = home.path() + "/.config/nvrtc-cache/nvrtc-cache.conf";
  write_file(user, "# my settings\nlog = info   # not a comment: part of nothing\nmax_size = 1G\n\n# end\n");
  write_file(user, "# my settings\nlog = info\nmax_size = 1G\n\n# end\n");
  const auto set = cli({"config", "set", "max_size", "2G"}, env);
  EXPECT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(read_file(user), "# my settings\nlog = info\nmax_size = 2G\n\n# end\n");
  EXPECT_EQ(cli({"config", "get", "max_size"}, env).out, "2G\n");
  EXPECT_EQ(cli({"config", "set", "NVRTC_CACHE_SHARED", "1"}, env).exit_code, 0);  // by its variable too
  EXPECT_EQ(read_file(user), "# my settings\nlog = info\nmax_size = 2G\n\n# end\nshared = 1\n");
  const auto bad = cli({"config", "set", "max_size", "lots"}, env);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("max_size = lots is not a size"), std::string::npos) << bad.err;
  EXPECT_EQ(cli({"config", "set", "nonsense", "1"}, env).exit_code, 2);
  EXPECT_EQ(read_file(user), "# my settings\nlog = info\nmax_size = 2G\n\n# end\nshared = 1\n") << "unchanged";
  TempDir fresh;  // no file yet: created with its directory
  EXPECT_EQ(cli({"config", "set", "log", "debug"}, user_env(fresh)).exit_code, 0);
  EXPECT_EQ(read_file(fresh.path() + "/.config/nvrtc-cache/nvrtc-cache.conf"), "log = debug\n");
}

TEST(CliConfig, MarkdownIsTheSettingsTable) {
  const auto md = cli({"config", "--markdown"}, {});
  EXPECT_EQ(md.exit_code, 0);
  for (const char* row :
       {"| `max_size` | `NVRTC_CACHE_MAX_SIZE` | size | `5G` |", "| `remote` | `NVRTC_CACHE_REMOTE` |",
        "| `remote_secret_file` | `NVRTC_CACHE_REMOTE_SECRET_FILE` |"}) {
    EXPECT_NE(md.out.find(row), std::string::npos) << row << " in " << md.out;
  }
}

// docs/configuration.md's settings table is the generator's output, verbatim
// (scripts/configuration_doc.sh rewrites it between its markers); the README points to that page.
TEST(CliConfig, ConfigurationDocIsGeneratedFromTheTable) {
  const auto md = cli({"config", "--markdown"}, {});
  ASSERT_EQ(md.exit_code, 0);
  const std::string page = read_file(std::string(NVRTC_CACHE_SOURCE_DIR) + "/docs/configuration.md");
  const std::string begin = "<!-- settings: generated by `nvrtc-cache config --markdown` -->\n";
  const std::string end = "<!-- settings: end -->";
  const std::size_t from = page.find(begin), to = page.find(end);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(page.substr(from + begin.size(), to - from - begin.size()), md.out)
      << "run scripts/configuration_doc.sh after changing core/settings.cc";
  const std::string readme = read_file(std::string(NVRTC_CACHE_SOURCE_DIR) + "/README.md");
  EXPECT_NE(readme.find("(docs/configuration.md)"), std::string::npos) << "the README links the page";
}

// The README is for users: at most 250 lines, everything else in docs/. Every relative link of the
// README and of docs/*.md names a file that exists and, with a #fragment, a heading of that file
// (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens).
std::string heading_anchor(const std::string& heading) {
  std::string anchor;
  for (const char c : heading) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_') {
      anchor += static_cast<char>(std::tolower(u));
    } else if (c == ' ') {
      anchor += '-';
    } else if (u >= 0x80) {
      anchor += c;  // UTF-8 letters stay
    }
  }
  return anchor;
}

std::vector<std::string> heading_anchors(const std::string& text) {
  std::vector<std::string> anchors;
  std::istringstream lines(text);
  bool fenced = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.rfind("#", 0) != 0) continue;
    const std::size_t text_start = line.find_first_not_of('#');
    if (text_start == std::string::npos || line[text_start] != ' ') continue;
    anchors.push_back(heading_anchor(line.substr(text_start + 1)));
  }
  return anchors;
}

TEST(Readme, IsShortAndEveryDocumentationLinkResolves) {
  namespace fs = std::filesystem;
  const fs::path root(NVRTC_CACHE_SOURCE_DIR);
  const std::string readme = read_file((root / "README.md").string());
  EXPECT_LE(std::count(readme.begin(), readme.end(), '\n'), 250) << "README.md: at most 250 lines";
  std::vector<fs::path> pages{root / "README.md"};
  for (const auto& entry : fs::directory_iterator(root / "docs")) {
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  }
  int links = 0;
  for (const fs::path& page : pages) {
    const std::string text = read_file(page.string());
    for (std::size_t at = text.find("]("); at != std::string::npos; at = text.find("](", at + 2)) {
      const std::size_t end = text.find(')', at + 2);
      ASSERT_NE(end, std::string::npos) << page;
      const std::string target = text.substr(at + 2, end - at - 2);
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      const std::size_t hash = target.find('#');
      const std::string file = target.substr(0, hash);
      const fs::path resolved = file.empty() ? page : page.parent_path() / file;
      ++links;
      ASSERT_TRUE(fs::exists(resolved)) << page.filename() << " links " << target << ": no such file";
      if (hash == std::string::npos) continue;
      const auto anchors = heading_anchors(read_file(resolved.string()));
      EXPECT_NE(std::find(anchors.begin(), anchors.end(), target.substr(hash + 1)), anchors.end())
          << page.filename() << " links " << target << ": no such heading";
    }
  }
  EXPECT_GT(links, 20) << "the README and docs/ link each other";
  for (const char* page : {"docs/configuration.md", "docs/design.md", "docs/shared-tiers.md", "docs/prewarm.md",
                           "docs/trust-model.md", "docs/coverage.md", "docs/platforms.md", "docs/limits.md",
                           "docs/performance.md", "docs/nvrtc-versions.md", "docs/testing.md", "docs/cli.md"}) {
    EXPECT_NE(readme.find(std::string("](") + page + ")"), std::string::npos) << "the README links " << page;
  }
}

nlohmann::json stats_json(const EnvVars& env) {
  const auto result = cli({"stats", "--json"}, env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return nlohmann::json::parse(result.out);
}

TEST(CliStats, ReasonsHitRateTopProgramsAndZeroing) {
  TempDir dir;
  const std::string timed = dir.path() + "/timed.cu";
  write_file(timed, "extern \"C\" __global__ void k(char* c) { c[0] = __TIME__[7]; }\n");
  EnvVars env = shim_env(dir.path() + "/cache");
  env["PROBE_TIME_FILE"] = dir.path() + "/time.csv";  // --time writes it
  ASSERT_EQ(probe({"trivial", "trivial", "time_option"}, env).exit_code, 0);
  EnvVars timed_env = env;
  timed_env["PROBE_SOURCE_FILE"] = timed;
  ASSERT_EQ(probe({"source_file"}, timed_env).exit_code, 0);
  const EnvVars cli_env = {{"NVRTC_CACHE_DIR", dir.path() + "/cache"}};
  const nlohmann::json s = stats_json(cli_env);
  EXPECT_EQ(s["schema_version"], 2);
  EXPECT_EQ(s["hits"], 1);
  EXPECT_EQ(s["misses"], 1);
  EXPECT_EQ(s["uncacheable"], 2);
  EXPECT_DOUBLE_EQ(s["hit_rate"].get<double>(), 0.5);
  EXPECT_EQ(s["reasons"]["miss"], nlohmann::json({{"new_program", 1}}));
  EXPECT_EQ(s["reasons"]["uncacheable"], nlohmann::json({{"side_effect_option", 1}, {"time", 1}}));
  ASSERT_EQ(s["top_compile_time"].size(), 1u);
  EXPECT_EQ(s["top_compile_time"][0]["program_name"], "trivial.cu");
  EXPECT_GT(s["top_compile_time"][0]["compile_seconds"].get<double>(), 0);
  const auto human = cli({"stats"}, cli_env);
  EXPECT_NE(human.out.find("hit rate          50.0%"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("compiles (NVRTC): uncacheable by reason"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("time                   __TIME__ or __TIMESTAMP__ is used"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("new_program"), std::string::npos) << human.out;
  // tier.<index>.<what> counters (written by shared tiers) are shown as a group.
  {
    store::Status status;
    auto store = store::LmdbStore::open({dir.path() + "/cache/store", 64ull << 20}, &status);
    ASSERT_TRUE(store) << status.message();
    ASSERT_TRUE(store->add_counters({{"tier.0.hits", 3}, {"tier.0.errors", 1}}));
  }
  EXPECT_EQ(stats_json(cli_env)["tiers"], nlohmann::json({{"0", {{"errors", 1}, {"hits", 3}}}}));
  EXPECT_NE(cli({"stats"}, cli_env).out.find("tier 0\n  errors"), std::string::npos);

  const auto zeroed = cli({"stats", "-z"}, cli_env);
  EXPECT_EQ(zeroed.exit_code, 0) << zeroed.err;
  const nlohmann::json after = stats_json(cli_env);
  EXPECT_EQ(after["hits"], 0);
  EXPECT_EQ(after["uncacheable"], 0);
  EXPECT_TRUE(after["reasons"]["uncacheable"].empty());
  EXPECT_EQ(after["entries"], s["entries"]) << "entries are kept";
  EXPECT_EQ(probe({"trivial"}, env).exit_code, 0);
  EXPECT_EQ(stats_json(cli_env)["hits"], 1) << "still served after zeroing";
}

// The bytes the probe printed for one output ("cubin data_rc=0 bytes=<hex>"), less its 16 canary bytes.
std::string probed_hex(const std::string& out, const std::string& label) {
  const std::string marker = label + " data_rc=0 bytes=";
  const std::size_t at = out.find(marker);
  if (at == std::string::npos) return "";
  std::string hex = out.substr(at + marker.size(), out.find('\n', at) - at - marker.size());
  return hex.substr(0, hex.size() - 32);
}

std::string hex_of(const std::string& bytes) {
  std::string out;
  for (const unsigned char c : bytes) {
    static const char* digits = "0123456789abcdef";
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

TEST(CliEntries, LsInspectAndExtractByteIdenticalToNvrtc) {
  TempDir dir;
  const auto direct = probe({"cubin"}, {});
  ASSERT_EQ(direct.exit_code, 0);
  ASSERT_EQ(probe({"cubin"}, shim_env(dir.path())).exit_code, 0);
  const EnvVars env = {{"NVRTC_CACHE_DIR", dir.path()}};
  const auto ls = cli({"ls", "--json"}, env);
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  const nlohmann::json listed = nlohmann::json::parse(ls.out);
  ASSERT_EQ(listed["entries"].size(), 1u);
  const nlohmann::json& e = listed["entries"][0];
  EXPECT_EQ(e["program_name"], "cubin.cu");
  EXPECT_EQ(e["options"], nlohmann::json({"-arch=sm_80", "-lineinfo"}));
  EXPECT_EQ(e["architecture"], "sm_80");
  EXPECT_GT(e["sizes"]["cubin"].get<int>(), 0);
  EXPECT_GT(e["dependencies"].get<int>(), 0);
  EXPECT_GT(e["last_use"].get<std::int64_t>(), 0);
  const std::string key = e["key"];
  const auto table = cli({"ls", "--sort", "time"}, env);
  EXPECT_NE(table.out.find(key.substr(0, 16) + "  cubin.cu"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("sm_80"), std::string::npos);
  EXPECT_EQ(cli({"ls", "--sort", "color"}, env).exit_code, 2);

  const auto inspected = cli({"inspect", key.substr(0, 8)}, env);
  EXPECT_EQ(inspected.exit_code, 0) << inspected.err;
  for (const char* expected :
       {"program        cubin.cu", "options        -arch=sm_80 -lineinfo", "architecture   sm_80",
        "now            hit: every dependency holds", "dependencies   "}) {
    EXPECT_NE(inspected.out.find(expected), std::string::npos) << expected << " in " << inspected.out;
  }
  EXPECT_EQ(cli({"inspect", "zzzz"}, env).exit_code, 2);
  EXPECT_EQ(cli({"inspect", "0000000000"}, env).exit_code, key.starts_with("0000000000") ? 0 : 2);

  for (const char* kind : {"cubin", "ptx", "log"}) {
    const std::string out = dir.path() + "/out." + kind;
    const auto extracted = cli({"extract", key.substr(0, 12), std::string("--") + kind, "-o", out}, env);
    ASSERT_EQ(extracted.exit_code, 0) << extracted.err;
    const std::string expected = probed_hex(direct.out, kind);
    ASSERT_FALSE(expected.empty()) << kind;
    EXPECT_EQ(hex_of(read_file(out)), expected) << kind << " is byte-identical to NVRTC's";
  }
  const auto no_ltoir = cli({"extract", key.substr(0, 12), "--ltoir", "-o", dir.path() + "/x"}, env);
  EXPECT_EQ(no_ltoir.exit_code, 1);
  EXPECT_NE(no_ltoir.err.find("has no LTO-IR"), std::string::npos) << no_ltoir.err;
  EXPECT_EQ(cli({"extract", key.substr(0, 12), "-o", dir.path() + "/x"}, env).exit_code, 2) << "one kind needed";
}

TEST(CliEntries, InspectSaysWhyAnEntryWouldMissNow) {
  TempDir dir, include;
  write_file(include.path() + "/probe_dep.h", "#define PROBE_VALUE 1\n");
  EnvVars env = shim_env(dir.path());
  env["PROBE_INCLUDE_DIR"] = include.path();
  ASSERT_EQ(probe({"include_dir"}, env).exit_code, 0);
  const EnvVars cli_env = {{"NVRTC_CACHE_DIR", dir.path()}};
  const std::string key = nlohmann::json::parse(cli({"ls", "--json"}, cli_env).out)["entries"][0]["key"];
  EXPECT_NE(cli({"inspect", key.substr(0, 8)}, cli_env).out.find("now            hit"), std::string::npos);
  write_file(include.path() + "/probe_dep.h", "#define PROBE_VALUE 2\n");
  const auto changed = cli({"inspect", key.substr(0, 8)}, cli_env);
  EXPECT_NE(changed.out.find("now            miss: " + include.path() + "/probe_dep.h changed"), std::string::npos)
      << changed.out;
  const nlohmann::json j = nlohmann::json::parse(cli({"inspect", key.substr(0, 8), "--json"}, cli_env).out);
  EXPECT_EQ(j["now"], "miss: " + include.path() + "/probe_dep.h changed");
}

TEST(CliDoctor, HealthySetupPassesAndARefusedDirectoryFails) {
  TempDir home;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  const auto healthy = cli({"doctor"}, env);
  EXPECT_EQ(healthy.exit_code, 0) << healthy.out << healthy.err;
  for (const char* expected : {"ok    shim ", "ok    NVRTC            /", ", found in ", "ok    cache directory ",
                               "ok    store ", "ok    shared tiers ",
                               "ok    sample compile   intercepted, stored, then served from the cache, "
                               "byte-identical to NVRTC",
                               "verdict: caching works"}) {
    EXPECT_NE(healthy.out.find(expected), std::string::npos) << expected << " in " << healthy.out;
  }
  ASSERT_EQ(chmod((home.path() + "/cache").c_str(), 0777), 0);  // writable by others: refused
  const auto broken = cli({"doctor", "--no-compile"}, env);
  EXPECT_EQ(broken.exit_code, 1) << broken.out;
  EXPECT_NE(broken.out.find("FAIL  cache directory  cannot be used"), std::string::npos) << broken.out;
  EXPECT_NE(broken.out.find("verdict: 1 problem(s) above block caching"), std::string::npos) << broken.out;
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache2";
  env["NVRTC_CACHE_SHIM"] = home.path() + "/missing.so";
  const auto no_shim = cli({"doctor"}, env);
  EXPECT_EQ(no_shim.exit_code, 1);
  EXPECT_NE(no_shim.out.find("FAIL  shim "), std::string::npos) << no_shim.out;
}

// A newer NVRTC than this build knows (the stand-in 13.9 of tests/clients/future_nvrtc/ with an unknown getter)
// first on the library path: doctor names the functions it does not know and says what that costs.
TEST(CliDoctor, NamesTheFunctionsOfANewerNvrtcItDoesNotKnow) {
  TempDir home;
  EnvVars env = user_env(home);
  env["NVRTC_CACHE_DIR"] = home.path() + "/cache";
  env["LD_LIBRARY_PATH"] = std::string(NVRTC_CACHE_FUTURE_NVRTC_DIR) + "/future-getter";
  env["VIRTUAL_ENV"] = std::nullopt;  // no wheel found before the loader's directories
  env["CONDA_PREFIX"] = std::nullopt;
  const auto report = cli({"doctor", "--no-compile"}, env);
  EXPECT_NE(report.out.find("WARN  NVRTC            NVRTC 13.9 ("), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("exports functions this nvrtc-cache does not know (nvrtcGetFutureIR, "
                            "nvrtcGetFutureIRSize): its compiles pass through uncached"),
            std::string::npos)
      << report.out;
}

// Runs the CLI on a pseudo-terminal (stdin, stdout and stderr all on it); returns what it wrote.
std::string run_on_terminal(const std::vector<std::string>& args, const std::string& cache_dir) {
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    setenv("NVRTC_CACHE_DIR", cache_dir.c_str(), 1);
    setenv("TERM", "xterm", 1);
    unsetenv("LD_PRELOAD");
    std::vector<char*> argv = {const_cast<char*>(NVRTC_CACHE_CLI_PATH)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = read(master, buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  return out;
}

TEST(CliProgress, ABarOnATerminalAndNothingWhenPiped) {
  TempDir dir;
  {
    store::Status status;
    auto store = store::LmdbStore::open({dir.path() + "/store", 64ull << 20}, &status);
    ASSERT_TRUE(store) << status.message();
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(store->put("k" + std::to_string(i), std::string(1000, 'x')));
  }
  const std::string terminal = run_on_terminal({"verify"}, dir.path());
  EXPECT_NE(terminal.find("\rverifying ["), std::string::npos) << terminal;
  EXPECT_NE(terminal.find("100% (200/200)"), std::string::npos) << terminal;
  EXPECT_NE(terminal.find("entries             200"), std::string::npos) << terminal;
  const auto piped = cli({"verify"}, {{"NVRTC_CACHE_DIR", dir.path()}, {"TERM", "xterm"}});
  EXPECT_EQ(piped.err, "") << "nothing extra when piped";
  EXPECT_EQ(piped.out.find('\r'), std::string::npos);
  const std::string evicting = run_on_terminal({"evict", "--max-size", "1K"}, dir.path());
  EXPECT_NE(evicting.find("\revicting ["), std::string::npos) << evicting;
  EXPECT_NE(evicting.find("evicted 199 entries"), std::string::npos) << evicting;
}

TEST(CliHelp, EveryCommandHasHelpAManPageAndCompletion) {
  for (const char* command :
       {"run", "stats", "clear", "evict", "verify", "config", "ls", "inspect", "extract", "doctor", "help"}) {
    const auto help = cli({command, "--help"}, {});
    EXPECT_EQ(help.exit_code, 0) << command << help.err;
    EXPECT_NE(help.out.find("Usage:"), std::string::npos) << command << help.out;
  }
  const auto man = cli({"help", "--man"}, {});
  EXPECT_EQ(man.exit_code, 0);
  for (const char* expected : {".TH NVRTC-CACHE 1", ".SS doctor", ".SS extract", "\\-\\-max\\-size", "max_size"}) {
    EXPECT_NE(man.out.find(expected), std::string::npos) << expected;
  }
  EXPECT_EQ(man.out.find("__sample"), std::string::npos) << "hidden commands stay hidden";
  const auto completion = cli({"help", "--bash-completion"}, {});
  EXPECT_NE(completion.out.find("complete -F _nvrtc_cache nvrtc-cache"), std::string::npos);
  EXPECT_NE(completion.out.find("extract) words=\"--cubin --ptx"), std::string::npos) << completion.out;
  const auto syntax = run_process({"/bin/bash", "-n", "-c", completion.out});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
}

}  // namespace
}  // namespace nvrtc_cache
