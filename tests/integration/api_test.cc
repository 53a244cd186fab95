// The C API (include/nvrtc_cache.h) through the shared library libnvrtc-cache-api.so.1, on real LMDB
// stores in temporary directories: the calls and their status codes, exact keys, the namespace
// beside the shim's entries (seen through the CLI), the cap, several processes (forked, with handles
// opened before and after the fork), a damaged store, and the shim in the same process.
// This binary links only the shared library (no second copy of the store code in the process).
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "include/nvrtc_cache.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {
namespace {

struct Handle {
  nvrtc_cache_t* cache = nullptr;
  ~Handle() { nvrtc_cache_close(cache); }
};

nvrtc_cache_options options_for(const std::string& directory, std::uint64_t max_size_bytes = 0,
                                const char* settings = nullptr) {
  nvrtc_cache_options o{};
  o.size = sizeof o;
  o.flags = NVRTC_CACHE_OPEN_DEFAULTS;
  o.directory = directory.c_str();
  o.settings = settings;
  o.max_size_bytes = max_size_bytes;
  return o;
}

void open_at(const std::string& directory, Handle* h, std::uint64_t max_size_bytes = 0) {
  const nvrtc_cache_options o = options_for(directory, max_size_bytes);
  ASSERT_EQ(nvrtc_cache_open(&o, &h->cache), NVRTC_CACHE_OK) << nvrtc_cache_error_message();
}

int put(nvrtc_cache_t* c, const std::string& key, const std::string& value) {
  return nvrtc_cache_put(c, key.data(), key.size(), value.data(), value.size());
}

// The value, or "<status name>".
std::string get(nvrtc_cache_t* c, const std::string& key) {
  void* value = nullptr;
  size_t size = 0;
  const int status = nvrtc_cache_get(c, key.data(), key.size(), &value, &size);
  if (status != NVRTC_CACHE_OK) return std::string("<") + nvrtc_cache_status_name(status) + ">";
  std::string out(static_cast<const char*>(value), size);
  nvrtc_cache_free(value);
  return out;
}

std::uint64_t count(nvrtc_cache_t* c) {
  std::uint64_t n = 0;
  EXPECT_EQ(nvrtc_cache_count(c, &n), NVRTC_CACHE_OK) << nvrtc_cache_error_message();
  return n;
}

std::uint64_t size_of(nvrtc_cache_t* c) {
  std::uint64_t n = 0;
  EXPECT_EQ(nvrtc_cache_size(c, &n), NVRTC_CACHE_OK) << nvrtc_cache_error_message();
  return n;
}

TEST(CApi, VersionAndStatusNames) {
  EXPECT_EQ(nvrtc_cache_version() >> 16, static_cast<unsigned>(NVRTC_CACHE_VERSION_MAJOR));
  EXPECT_EQ(nvrtc_cache_version(), static_cast<unsigned>(NVRTC_CACHE_VERSION));
  EXPECT_STREQ(nvrtc_cache_status_name(NVRTC_CACHE_NOT_FOUND), "NVRTC_CACHE_NOT_FOUND");
  EXPECT_STREQ(nvrtc_cache_status_name(12345), "unknown status");
}

TEST(CApi, ExportsOnlyItsOwnSymbols) {
  const ProcessResult nm = run_process({"/usr/bin/nm", "-D", "--defined-only", NVRTC_CACHE_API_PATH});
  ASSERT_EQ(nm.exit_code, 0) << nm.err;
  std::size_t exported = 0;
  std::istringstream lines(nm.out);
  for (std::string line; std::getline(lines, line);) {
    const std::string symbol = line.substr(line.rfind(' ') + 1);
    if (symbol.rfind("NVRTC_CACHE_API_", 0) == 0) continue;  // the version node
    EXPECT_EQ(symbol.rfind("nvrtc_cache_", 0), 0u) << symbol;
    ++exported;
  }
  EXPECT_EQ(exported, 15u) << nm.out;
}

TEST(CApi, PutGetEraseClearCountSize) {
  TempDir dir;
  Handle h;
  open_at(dir.path(), &h);
  EXPECT_EQ(get(h.cache, "k"), "<NVRTC_CACHE_NOT_FOUND>");
  EXPECT_EQ(put(h.cache, "k", "v1"), NVRTC_CACHE_OK);
  EXPECT_EQ(get(h.cache, "k"), "v1");
  EXPECT_EQ(put(h.cache, "k", "v2"), NVRTC_CACHE_OK);
  EXPECT_EQ(get(h.cache, "k"), "v2");
  // Empty keys and values, NULs, keys of any length and keys one byte apart are all distinct.
  const std::string nul("a\0b", 3), long_key(1 << 20, 'x');
  EXPECT_EQ(put(h.cache, "", ""), NVRTC_CACHE_OK);
  EXPECT_EQ(nvrtc_cache_put(h.cache, nullptr, 0, nullptr, 0), NVRTC_CACHE_OK);
  EXPECT_EQ(put(h.cache, nul, "nul"), NVRTC_CACHE_OK);
  EXPECT_EQ(put(h.cache, long_key, "long"), NVRTC_CACHE_OK);
  EXPECT_EQ(put(h.cache, long_key + "y", "longer"), NVRTC_CACHE_OK);
  EXPECT_EQ(get(h.cache, ""), "");
  EXPECT_EQ(get(h.cache, nul), "nul");
  EXPECT_EQ(get(h.cache, std::string("a")), "<NVRTC_CACHE_NOT_FOUND>");
  EXPECT_EQ(get(h.cache, long_key), "long");
  EXPECT_EQ(get(h.cache, long_key + "y"), "longer");
  EXPECT_EQ(count(h.cache), 5u);
  // The size counts each entry's key and value (and a 9-byte header).
  EXPECT_EQ(size_of(h.cache),
            (9 + 1 + 2) + 9 + (9 + 3 + 3) + (9 + long_key.size() + 4) + (9 + long_key.size() + 1 + 6));
  EXPECT_EQ(nvrtc_cache_erase(h.cache, "k", 1), NVRTC_CACHE_OK);
  EXPECT_EQ(nvrtc_cache_erase(h.cache, "k", 1), NVRTC_CACHE_NOT_FOUND);
  EXPECT_EQ(get(h.cache, "k"), "<NVRTC_CACHE_NOT_FOUND>");
  EXPECT_EQ(count(h.cache), 4u);
  EXPECT_EQ(nvrtc_cache_clear(h.cache), NVRTC_CACHE_OK);
  EXPECT_EQ(count(h.cache), 0u);
  EXPECT_EQ(size_of(h.cache), 0u);
  nvrtc_cache_stats stats{};
  stats.size = sizeof stats;
  ASSERT_EQ(nvrtc_cache_stats_get(h.cache, &stats), NVRTC_CACHE_OK);
  EXPECT_EQ(stats.puts, 7u);
  EXPECT_EQ(stats.erases, 1u);
  EXPECT_EQ(stats.hits, 6u);
  EXPECT_EQ(stats.misses, 3u);
  EXPECT_EQ(stats.shared_tiers, 0u);
  EXPECT_EQ(nvrtc_cache_flush(h.cache, 10), NVRTC_CACHE_OK);
  EXPECT_NE(nvrtc_cache_directory(h.cache), nullptr);
}

TEST(CApi, BadArgumentsAreStatusesWithMessages) {
  TempDir dir;
  EXPECT_EQ(nvrtc_cache_open(nullptr, nullptr), NVRTC_CACHE_INVALID_ARGUMENT);
  EXPECT_STRNE(nvrtc_cache_error_message(), "");
  nvrtc_cache_t* c = nullptr;
  nvrtc_cache_options o = options_for(dir.path());
  o.size = 8;
  EXPECT_EQ(nvrtc_cache_open(&o, &c), NVRTC_CACHE_INVALID_ARGUMENT);
  o = options_for(dir.path(), 0, "remote = nonsense://x\n");
  EXPECT_EQ(nvrtc_cache_open(&o, &c), NVRTC_CACHE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nvrtc_cache_error_message()).find("nonsense"), std::string::npos)
      << nvrtc_cache_error_message();
  o = options_for(dir.path(), 0, "no_such_setting = 1\n");
  EXPECT_EQ(nvrtc_cache_open(&o, &c), NVRTC_CACHE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nvrtc_cache_error_message()).find("no_such_setting"), std::string::npos);
  o = options_for(dir.path());
  o.flags = 0x80;
  EXPECT_EQ(nvrtc_cache_open(&o, &c), NVRTC_CACHE_INVALID_ARGUMENT);
  EXPECT_EQ(c, nullptr);
  void* value = nullptr;
  size_t size = 0;
  EXPECT_EQ(nvrtc_cache_get(nullptr, "k", 1, &value, &size), NVRTC_CACHE_INVALID_ARGUMENT);
  EXPECT_EQ(nvrtc_cache_put(nullptr, "k", 1, "v", 1), NVRTC_CACHE_INVALID_ARGUMENT);
  Handle h;
  open_at(dir.path(), &h);
  EXPECT_EQ(nvrtc_cache_get(h.cache, nullptr, 1, &value, &size), NVRTC_CACHE_INVALID_ARGUMENT);
  EXPECT_EQ(nvrtc_cache_get(h.cache, "k", 1, nullptr, &size), NVRTC_CACHE_INVALID_ARGUMENT);
  EXPECT_EQ(nvrtc_cache_put(h.cache, "k", 1, nullptr, 1), NVRTC_CACHE_INVALID_ARGUMENT);
  nvrtc_cache_stats small{};
  small.size = 8;
  EXPECT_EQ(nvrtc_cache_stats_get(h.cache, &small), NVRTC_CACHE_INVALID_ARGUMENT);
  nvrtc_cache_close(nullptr);
  nvrtc_cache_free(nullptr);
  EXPECT_EQ(get(h.cache, "k"), "<NVRTC_CACHE_NOT_FOUND>");
  EXPECT_STREQ(nvrtc_cache_error_message(), "no entry under this key");
  EXPECT_EQ(put(h.cache, "k", "v"), NVRTC_CACHE_OK);
  EXPECT_STREQ(nvrtc_cache_error_message(), "");
}

// Settings the C API does not read, keys without values and bad values are refused at open, each
// message naming the setting and its line, without what the shim would do instead ("; ignored");
// a secret file others may read is used (the shim only warns), an unreachable tier fails open.
TEST(CApi, SettingsAreRefusedAtOpenNamingTheLineAndUnreachableTiersFailOpen) {
  TempDir dir, tier;
  nvrtc_cache_t* c = nullptr;
  const std::string relative_tier = "remote = file://relative/dir\n";
  for (const auto& [settings, named] : std::vector<std::pair<std::string, std::string>>{
           {"log = debug\n", "settings:1: 'log' is a setting of the shim, which the C API does not use"},
           {"shared = 1\nwait_timeout = 5\n", "settings:2: 'wait_timeout' is a setting of the shim"},
           {"remote =\n", "settings:1: 'remote' has no value"},
           {"max_size = lots\n", "settings:1: max_size='lots' is not a size of at least 1M (e.g. 10G, 512M)"},
           {relative_tier, "remote (settings:1): the shared tier URL file://relative/dir names a host"},
           {"remote = file://" + tier.path() + "\nremote_secret_file = /nonexistent\n",
            "remote_secret_file (settings:2) /nonexistent: does not exist"}}) {
    const nvrtc_cache_options o = options_for(dir.path(), 0, settings.c_str());
    EXPECT_EQ(nvrtc_cache_open(&o, &c), NVRTC_CACHE_INVALID_ARGUMENT) << settings;
    EXPECT_EQ(c, nullptr);
    const std::string message = nvrtc_cache_error_message();
    EXPECT_NE(message.find(named), std::string::npos) << message;
    for (const char* tail : {"; ignored", "; using", "; skipped", "shared tiers are not used"}) {
      EXPECT_EQ(message.find(tail), std::string::npos) << message;
    }
  }
  const std::string secret = tier.path() + "/secret";
  {
    std::ofstream f(secret);
    f << "0123456789abcdefghijklmnopqrstuvwxyzABCDEF\n";
  }
  ASSERT_EQ(chmod(secret.c_str(), 0644), 0);
  const std::string signed_tier = "remote = file://" + tier.path() + "/tier\nremote_secret_file = " + secret + "\n";
  for (const std::string& settings : {signed_tier, std::string("remote = redis://127.0.0.1:1\n")}) {
    Handle h;
    const nvrtc_cache_options o = options_for(dir.path(), 0, settings.c_str());
    ASSERT_EQ(nvrtc_cache_open(&o, &h.cache), NVRTC_CACHE_OK) << settings << nvrtc_cache_error_message();
    nvrtc_cache_stats stats{};
    stats.size = sizeof stats;
    ASSERT_EQ(nvrtc_cache_stats_get(h.cache, &stats), NVRTC_CACHE_OK);
    EXPECT_EQ(stats.shared_tiers, 1u);
    EXPECT_EQ(put(h.cache, "k", "v"), NVRTC_CACHE_OK);
    EXPECT_EQ(get(h.cache, "k"), "v");
  }
}

TEST(CApi, TheShimsEntriesAreNeitherCountedNorCleared) {
  TempDir dir;
  {
    Handle h;
    open_at(dir.path(), &h);
    ASSERT_EQ(put(h.cache, "mine", "value"), NVRTC_CACHE_OK);
  }
  // The CLI tells the store's entries apart by their key's prefix: an API entry is one of its own
  // kind, neither a compile result nor an unknown key.
  const ProcessResult verify = run_process({NVRTC_CACHE_CLI_PATH, "verify"}, {{"NVRTC_CACHE_DIR", dir.path()}});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("C API entries       1"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("unknown keys        0"), std::string::npos) << verify.out;
  const ProcessResult stats = run_process({NVRTC_CACHE_CLI_PATH, "stats", "--json"}, {{"NVRTC_CACHE_DIR", dir.path()}});
  EXPECT_NE(stats.out.find("\"api_entries\": 1"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("\"results\": 0"), std::string::npos) << stats.out;
}

// Look-ups and stores through the C API are counted in the store's statistics, beside the shim's:
// `stats` shows them, summed over processes (here a forked one too), and they survive _exit.
TEST(CApi, TrafficIsCountedInTheCachesStatistics) {
  TempDir dir;
  const pid_t child = fork();
  if (child == 0) {
    nvrtc_cache_t* cache = nullptr;
    const nvrtc_cache_options o = options_for(dir.path());
    if (nvrtc_cache_open(&o, &cache) != NVRTC_CACHE_OK || put(cache, "a", "1") != NVRTC_CACHE_OK) _exit(1);
    _exit(get(cache, "a") == "1" ? 0 : 2);  // no close: the counts are in the file already
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  {
    Handle h;
    open_at(dir.path(), &h);
    ASSERT_EQ(put(h.cache, "b", "2"), NVRTC_CACHE_OK);
    EXPECT_EQ(get(h.cache, "a"), "1");
    EXPECT_EQ(get(h.cache, "b"), "2");
    EXPECT_EQ(get(h.cache, "c"), "<NVRTC_CACHE_NOT_FOUND>");
  }
  const ProcessResult json = run_process({NVRTC_CACHE_CLI_PATH, "stats", "--json"}, {{"NVRTC_CACHE_DIR", dir.path()}});
  EXPECT_NE(json.out.find("\"api_hits\": 3"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"api_misses\": 1"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"api_stores\": 2"), std::string::npos) << json.out;
  const ProcessResult human = run_process({NVRTC_CACHE_CLI_PATH, "stats"}, {{"NVRTC_CACHE_DIR", dir.path()}});
  EXPECT_NE(human.out.find("C API look-ups    3 hits, 1 misses (75.0%), 2 stores"), std::string::npos) << human.out;
}

TEST(CApi, ExportAndImportCarryTheEntries) {
  TempDir from, to, archive_dir;
  {
    Handle h;
    open_at(from.path(), &h);
    ASSERT_EQ(put(h.cache, "exported key", "exported value"), NVRTC_CACHE_OK);
  }
  const std::string archive = archive_dir.path() + "/a.nvrtc-cache";
  const ProcessResult exported =
      run_process({NVRTC_CACHE_CLI_PATH, "export", archive}, {{"NVRTC_CACHE_DIR", from.path()}});
  ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
  const ProcessResult imported =
      run_process({NVRTC_CACHE_CLI_PATH, "import", archive}, {{"NVRTC_CACHE_DIR", to.path()}});
  ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
  Handle h;
  open_at(to.path(), &h);
  EXPECT_EQ(get(h.cache, "exported key"), "exported value");
}

TEST(CApi, TheCapEvictsTheLeastRecentlyUsed) {
  TempDir dir;
  Handle h;
  open_at(dir.path(), &h, 10000);
  const std::string value(2000, 'v');
  for (int i = 0; i < 4; ++i) ASSERT_EQ(put(h.cache, "k" + std::to_string(i), value), NVRTC_CACHE_OK);
  EXPECT_EQ(get(h.cache, "k0"), value);
  ASSERT_EQ(put(h.cache, "k4", value), NVRTC_CACHE_OK);
  EXPECT_LE(size_of(h.cache), 10000u);
  EXPECT_EQ(get(h.cache, "k1"), "<NVRTC_CACHE_NOT_FOUND>");
  EXPECT_EQ(get(h.cache, "k0"), value);
  EXPECT_EQ(get(h.cache, "k4"), value);
  ASSERT_EQ(put(h.cache, "huge", std::string(20000, 'h')), NVRTC_CACHE_OK);
  EXPECT_EQ(get(h.cache, "huge"), "<NVRTC_CACHE_NOT_FOUND>");
  EXPECT_LE(size_of(h.cache), 10000u);
}

// Forked writers and readers: a handle opened before the fork (used by every child) and handles of
// their own, on one key and on many keys; every value read is one writer's whole value.
std::string value_of(int writer, int round) {
  std::string v = std::to_string(writer) + "/" + std::to_string(round) + ":";
  v.append(static_cast<std::size_t>(500 + 37 * writer + round), static_cast<char>('a' + writer % 26));
  return v;
}

bool well_formed(const std::string& v) {
  const std::size_t slash = v.find('/'), colon = v.find(':');
  if (slash == std::string::npos || colon == std::string::npos) return false;
  return v == value_of(std::stoi(v.substr(0, slash)), std::stoi(v.substr(slash + 1, colon - slash - 1)));
}

TEST(CApi, ForkedWritersAndReadersOnOneKeyAndManyKeys) {
  TempDir dir;
  Handle inherited;
  open_at(dir.path(), &inherited);
  ASSERT_EQ(put(inherited.cache, "shared", value_of(0, 0)), NVRTC_CACHE_OK);
  constexpr int kChildren = 8, kRounds = 30;
  std::vector<pid_t> children;
  for (int child = 0; child < kChildren; ++child) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failures = 0;
      nvrtc_cache_t* own = nullptr;
      const nvrtc_cache_options o = options_for(dir.path());
      if (nvrtc_cache_open(&o, &own) != NVRTC_CACHE_OK) _exit(2);
      nvrtc_cache_t* c = child % 2 == 0 ? inherited.cache : own;
      for (int round = 0; round < kRounds; ++round) {
        failures += put(c, "shared", value_of(child, round)) != NVRTC_CACHE_OK;
        failures += !well_formed(get(c, "shared"));
        const std::string key = "child" + std::to_string(child) + "-" + std::to_string(round);
        failures += put(c, key, value_of(child, round)) != NVRTC_CACHE_OK;
        failures += get(own, key) != value_of(child, round);
      }
      nvrtc_cache_close(own);
      _exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_TRUE(well_formed(get(inherited.cache, "shared")));
  EXPECT_EQ(count(inherited.cache), static_cast<std::uint64_t>(kChildren * kRounds + 1));
  for (int child = 0; child < kChildren; ++child) {
    for (int round = 0; round < kRounds; ++round) {
      EXPECT_EQ(get(inherited.cache, "child" + std::to_string(child) + "-" + std::to_string(round)),
                value_of(child, round));
    }
  }
}

// Bytes flipped all over data.mdb: every get answers the exact value or nothing, never another value
// or a crash; the store is usable (or recreated) afterwards.
TEST(CApi, ADamagedStoreAnswersExactlyOrNotAtAll) {
  TempDir dir;
  std::vector<std::string> keys;
  {
    Handle h;
    open_at(dir.path(), &h);
    for (int i = 0; i < 200; ++i) {
      keys.push_back("key" + std::to_string(i));
      ASSERT_EQ(put(h.cache, keys.back(), value_of(i, i)), NVRTC_CACHE_OK);
    }
  }
  const std::string data = dir.path() + "/store/data.mdb";
  struct stat st {};
  ASSERT_EQ(stat(data.c_str(), &st), 0);
  std::mt19937 random(29);
  {
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    for (int i = 0; i < 400; ++i) {
      // Past the two meta pages: the entries' pages.
      f.seekp(static_cast<std::streamoff>(8192 + random() % static_cast<unsigned>(st.st_size - 8192)));
      f.put(static_cast<char>(random()));
    }
  }
  // In a child: a damaged store may be moved aside by the open, and the test must outlive it anyway.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    nvrtc_cache_t* c = nullptr;
    const nvrtc_cache_options o = options_for(dir.path());
    if (nvrtc_cache_open(&o, &c) != NVRTC_CACHE_OK) _exit(0);  // refused whole: also exact
    int wrong = 0;
    for (int i = 0; i < 200; ++i) {
      const std::string got = get(c, keys[static_cast<std::size_t>(i)]);
      wrong += got != value_of(i, i) && got != "<NVRTC_CACHE_NOT_FOUND>";
    }
    nvrtc_cache_close(c);
    _exit(wrong == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  Handle h;
  open_at(dir.path(), &h);
  EXPECT_EQ(put(h.cache, "after", "damage"), NVRTC_CACHE_OK) << nvrtc_cache_error_message();
  EXPECT_EQ(get(h.cache, "after"), "damage");
}

// With the shim loaded into the process, its own store directory is refused; another one is not.
TEST(CApi, TheShimsDirectoryIsRefusedInAProcessWithTheShim) {
  TempDir shim_dir, other_dir;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("NVRTC_CACHE_DIR", shim_dir.path().c_str(), 1);
    if (dlopen(NVRTC_CACHE_SHIM_PATH, RTLD_NOW | RTLD_LOCAL) == nullptr) _exit(3);
    nvrtc_cache_t* c = nullptr;
    nvrtc_cache_options o{};
    o.size = sizeof o;
    if (nvrtc_cache_open(&o, &c) != NVRTC_CACHE_IN_USE) _exit(1);
    const nvrtc_cache_options other = options_for(other_dir.path());
    if (nvrtc_cache_open(&other, &c) != NVRTC_CACHE_OK) _exit(2);
    nvrtc_cache_close(c);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace nvrtc_cache::testing
