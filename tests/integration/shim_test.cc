// Integration tests: the real NVRTC, driven by tests/clients/nvrtc_probe.cc in separate processes, directly,
// under the shim with a cold cache and under the shim warm. Every return code and every byte of
// every getter must match the direct run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include <lmdb.h>

#include "core/compile_entry.h"
#include "core/stats.h"
#include "store/envelope.h"
#include "store/lmdb/lmdb_store.h"
#include "tests/support/dynamic_section.h"
#include "tests/support/harness.h"
#include "util/binary_io.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

struct ColdWarm {
  ProcessResult direct, cold, warm;
  store::Counters after_cold, after_warm;
  std::int64_t warm_delta(const std::string& name) const { return get(after_warm, name) - get(after_cold, name); }
};

ColdWarm run_cold_then_warm(const std::vector<std::string>& scenarios, const std::string& cache_dir) {
  ColdWarm r;
  r.direct = probe(scenarios, {});
  r.cold = probe(scenarios, shim_env(cache_dir));
  r.after_cold = counters_of(cache_dir);
  r.warm = probe(scenarios, shim_env(cache_dir));
  r.after_warm = counters_of(cache_dir);
  return r;
}

void expect_identical(const ColdWarm& r) {
  ASSERT_EQ(r.direct.exit_code, 0) << r.direct.err;
  EXPECT_EQ(r.cold.exit_code, 0) << r.cold.err;
  EXPECT_EQ(r.warm.exit_code, 0) << r.warm.err;
  EXPECT_FALSE(r.direct.out.empty());
  EXPECT_TRUE(r.direct.out == r.cold.out) << "cold run differs from NVRTC";
  EXPECT_TRUE(r.direct.out == r.warm.out) << "warm run differs from NVRTC";
  EXPECT_EQ(r.cold.err, "") << "the shim printed something at the default log level";
  EXPECT_EQ(r.warm.err, "");
}

class CachedScenario : public ::testing::TestWithParam<std::string> {};

// Every cacheable scenario: identical bytes cold and warm, and the warm run never compiled.
TEST_P(CachedScenario, WarmRunIsServedFromCacheWithIdenticalBytes) {
  TempDir dir;
  const ColdWarm r = run_cold_then_warm({GetParam()}, dir.path());
  expect_identical(r);
  EXPECT_GT(get(r.after_cold, "stores"), 0);
  EXPECT_EQ(r.warm_delta("misses"), 0) << "the warm run called the real compile";
  EXPECT_EQ(r.warm_delta("stores"), 0);
  EXPECT_GT(r.warm_delta("hits"), 0);
  EXPECT_EQ(get(r.after_warm, "errors"), 0);
}

INSTANTIATE_TEST_SUITE_P(Probe, CachedScenario,
                         ::testing::Values("trivial", "ptx", "cubin", "lto", "optix", "template", "headers",
                                           "compile_error", "warnings", "null_name", "recompile", "bad_inputs",
                                           "threads", "fork"));

// An option the option table does not know for this NVRTC (libraries/nvrtc/options.h) could add an output
// or a side effect: the compile goes to NVRTC uncached, is counted by its reason, and its results are
// NVRTC's (here NVRTC rejects it).
TEST(Shim, UnknownOptionsPassThroughUncachedAndExact) {
  TempDir dir;
  const ColdWarm r = run_cold_then_warm({"invalid_option"}, dir.path());
  expect_identical(r);
  EXPECT_EQ(get(r.after_warm, "hits") + get(r.after_warm, "misses") + get(r.after_warm, "stores"), 0);
  EXPECT_EQ(get(r.after_warm, "uncacheable"), 2);
  EXPECT_EQ(get(r.after_warm, "uncacheable.unknown_option"), 2);
  // Named once per process in the log, at info level, and each such compile is one info line.
  auto env = shim_env(dir.path());
  env["NVRTC_CACHE_LOG"] = "info";
  const ProcessResult logged = probe({"invalid_option", "invalid_option"}, env);
  EXPECT_EQ(logged.out, r.direct.out + r.direct.out);
  EXPECT_NE(logged.err.find("option --definitely-not-an-option is unknown for NVRTC 13.0"), std::string::npos)
      << logged.err;
  const std::string once = "not caching compiles with an option this build does not know";
  EXPECT_NE(logged.err.find(once), std::string::npos) << logged.err;
  EXPECT_EQ(logged.err.find(once), logged.err.rfind(once)) << "said twice";
  std::size_t per_compile = 0;
  for (std::size_t at = 0; (at = logged.err.find("not cached: program", at)) != std::string::npos; ++at) ++per_compile;
  EXPECT_EQ(per_compile, 2u) << logged.err;
}

TEST(Shim, DependenciesStayOutOfTheHostsGlobalScope) {
  TempDir dir;
  const ProcessResult direct = probe({"global_scope"}, {});
  const ProcessResult shimmed = probe({"global_scope"}, shim_env(dir.path()));
  ASSERT_EQ(shimmed.exit_code, 0) << shimmed.err;
  ASSERT_NE(shimmed.out.find("mdb_env_create absent"), std::string::npos) << "the probe did not look: " << shimmed.out;
  ASSERT_NE(shimmed.out.find("version 13."), std::string::npos) << "NVRTC was not reached: " << shimmed.out;
  EXPECT_EQ(direct.out, shimmed.out);
  EXPECT_EQ(shimmed.out.find(" visible"), std::string::npos) << shimmed.out;
}

TEST(Shim, ProgramReadingAHeaderFromDiskIsCachedWithItsDependencies) {
  TempDir dir;
  const ColdWarm r = run_cold_then_warm({"include_dir"}, dir.path());
  expect_identical(r);
  EXPECT_EQ(get(r.after_cold, "stores"), 1);
  EXPECT_EQ(r.warm_delta("hits"), 1);
  EXPECT_EQ(r.warm_delta("misses"), 0);
  EXPECT_EQ(get(r.after_warm, "uncacheable"), 0);
}

TEST(Shim, SideEffectOptionsPassThroughUncached) {
  TempDir dir;
  // --time writes a file during the compile: a cache hit would not write it, so never serve it.
  const std::string time_file = dir.path() + "/time.csv";
  auto env = shim_env(dir.path());
  env["PROBE_TIME_FILE"] = time_file;
  for (int run = 0; run < 2; ++run) {
    std::remove(time_file.c_str());
    const ProcessResult shimmed = run_process({NVRTC_PROBE_PATH, "time_option"}, env);
    EXPECT_EQ(shimmed.exit_code, 0);
    struct stat st;
    EXPECT_EQ(stat(time_file.c_str(), &st), 0) << "run " << run << " did not write the --time file";
  }
  const auto c = counters_of(dir.path());
  EXPECT_EQ(get(c, "hits"), 0);
  EXPECT_EQ(get(c, "uncacheable"), 2);
}

TEST(Shim, DifferentWorkingDirectoriesDoNotShareLineInfo) {
  TempDir cache, a, b;
  auto env = shim_env(cache.path());
  env["PROBE_INCLUDE_DIR"] = kIncludeDir;
  const auto direct_a = run_process({NVRTC_PROBE_PATH, "cubin"}, {{"PWD", a.path()}}, a.path());
  const auto direct_b = run_process({NVRTC_PROBE_PATH, "cubin"}, {{"PWD", b.path()}}, b.path());
  ASSERT_NE(direct_a.out, direct_b.out) << "line info no longer embeds the working directory?";
  env["PWD"] = a.path();
  EXPECT_EQ(run_process({NVRTC_PROBE_PATH, "cubin"}, env, a.path()).out, direct_a.out);
  env["PWD"] = b.path();
  EXPECT_EQ(run_process({NVRTC_PROBE_PATH, "cubin"}, env, b.path()).out, direct_b.out);
  EXPECT_EQ(run_process({NVRTC_PROBE_PATH, "cubin"}, env, b.path()).out, direct_b.out);
  EXPECT_EQ(get(counters_of(cache.path()), "hits"), 1);
}

// Damages every stored value in place (one byte in the middle), through LMDB itself.
int damage_every_entry(const std::string& store_dir) {
  MDB_env* env = nullptr;
  mdb_env_create(&env);
  mdb_env_set_maxdbs(env, 8);
  mdb_env_set_mapsize(env, 64ull << 20);
  if (mdb_env_open(env, store_dir.c_str(), 0, 0600) != 0) return -1;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi;
  mdb_txn_begin(env, nullptr, 0, &txn);
  int damaged = -1;
  if (mdb_dbi_open(txn, "entries", 0, &dbi) == 0) {
    damaged = 0;
    MDB_cursor* cursor = nullptr;
    mdb_cursor_open(txn, dbi, &cursor);
    MDB_val key, value;
    std::vector<std::pair<std::string, std::string>> rewritten;
    for (MDB_cursor_op op = MDB_FIRST; mdb_cursor_get(cursor, &key, &value, op) == 0; op = MDB_NEXT) {
      std::string bytes(static_cast<const char*>(value.mv_data), value.mv_size);
      bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x40);
      rewritten.emplace_back(std::string(static_cast<const char*>(key.mv_data), key.mv_size), bytes);
    }
    mdb_cursor_close(cursor);
    for (auto& [k, v] : rewritten) {
      MDB_val mk{k.size(), k.data()}, mv{v.size(), v.data()};
      if (mdb_put(txn, dbi, &mk, &mv, 0) == 0) ++damaged;
    }
  }
  mdb_txn_commit(txn);
  mdb_env_close(env);
  return damaged;
}

TEST(Shim, CorruptEntriesAreMissesAndGetRecompiled) {
  TempDir dir;
  const ProcessResult direct = probe({"trivial", "template", "lto"}, {});
  ASSERT_EQ(probe({"trivial", "template", "lto"}, shim_env(dir.path())).out, direct.out);
  // 3 manifests, 3 results and the LTO compile's working-directory markers (its directory, and each
  // of its outputs a link may take: shim/lifecycle/working_directory_markers.h)
  ASSERT_EQ(damage_every_entry(dir.path() + "/store"), 9);
  const ProcessResult damaged = probe({"trivial", "template", "lto"}, shim_env(dir.path()));
  EXPECT_EQ(damaged.out, direct.out) << "a damaged entry changed what the program saw";
  EXPECT_NE(damaged.err.find("failed its checksum"), std::string::npos) << damaged.err;
  const auto c = counters_of(dir.path());
  // The first damaged entry found is small (inside a leaf page): the whole store is moved aside,
  // its counters with it, and the fresh store counts from there.
  EXPECT_GE(get(c, "corrupt"), 1);
  EXPECT_EQ(get(c, "hits"), 0);
  EXPECT_EQ(get(c, "stores"), 3);  // recompiled and stored again
  const ProcessResult healed = probe({"trivial", "template", "lto"}, shim_env(dir.path()));
  EXPECT_EQ(healed.out, direct.out);
  EXPECT_EQ(get(counters_of(dir.path()), "hits"), 3);
}

// Rewrites every result entry (store key "R...") through `edit`, re-encoding it with a fresh XXH3
// checksum inside a fresh envelope, as any writer of a shared cache could; the number rewritten.
int rewrite_results(const std::string& store_dir, const std::function<void(core::CompileEntry&)>& edit) {
  MDB_env* env = nullptr;
  mdb_env_create(&env);
  mdb_env_set_maxdbs(env, 8);
  mdb_env_set_mapsize(env, 64ull << 20);
  if (mdb_env_open(env, store_dir.c_str(), 0, 0600) != 0) return -1;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi;
  mdb_txn_begin(env, nullptr, 0, &txn);
  int rewritten = -1;
  if (mdb_dbi_open(txn, "entries", 0, &dbi) == 0) {
    rewritten = 0;
    MDB_cursor* cursor = nullptr;
    mdb_cursor_open(txn, dbi, &cursor);
    MDB_val key, value;
    std::vector<std::pair<std::string, std::string>> updates;
    for (MDB_cursor_op op = MDB_FIRST; mdb_cursor_get(cursor, &key, &value, op) == 0; op = MDB_NEXT) {
      const std::string k(static_cast<const char*>(key.mv_data), key.mv_size);
      if (k.empty() || k[0] != 'R') continue;
      const auto payload = store::unwrap_value(k, {static_cast<const char*>(value.mv_data), value.mv_size});
      std::optional<core::CompileEntry> entry = payload ? core::decode_entry(*payload) : std::nullopt;
      if (!entry) return -1;
      edit(*entry);
      const std::string encoded = core::encode_entry(*entry);
      std::string_view body;
      if (!util::verify_checksummed(encoded, body)) return -1;  // only new validation may catch it
      updates.emplace_back(k, store::wrap_value(k, encoded));
    }
    mdb_cursor_close(cursor);
    for (auto& [k, v] : updates) {
      MDB_val mk{k.size(), k.data()}, mv{v.size(), v.data()};
      if (mdb_put(txn, dbi, &mk, &mv, 0) == 0) ++rewritten;
    }
  }
  mdb_txn_commit(txn);
  mdb_env_close(env);
  return rewritten;
}

// An output whose recorded size is not the length of its bytes made replay answer one size and
// copy another: a larger size left the host with bytes NVRTC never wrote, a smaller one overflowed
// the host's buffer. The checksums cannot catch it (the writer recomputes them); decoding must.
TEST(Shim, EntryWhoseSizeDisagreesWithItsBytesIsDroppedAndRecompiled) {
  const ProcessResult direct = probe({"ptx"}, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  for (const std::int64_t delta : {1, -1, -64}) {
    TempDir dir;
    ASSERT_EQ(probe({"ptx"}, shim_env(dir.path())).out, direct.out);
    ASSERT_EQ(get(counters_of(dir.path()), "stores"), 1);
    ASSERT_EQ(rewrite_results(dir.path() + "/store",
                              [&](core::CompileEntry& e) {
                                ASSERT_GT(e.ptx.bytes.size(), 64u);
                                e.ptx.size = static_cast<std::uint64_t>(static_cast<std::int64_t>(e.ptx.size) + delta);
                              }),
              1);
    const store::Counters before = counters_of(dir.path());
    const ProcessResult warm = probe({"ptx"}, shim_env(dir.path()));
    const store::Counters after = counters_of(dir.path());
    EXPECT_EQ(warm.exit_code, 0) << delta << ": " << warm.err;
    EXPECT_TRUE(warm.out == direct.out) << delta << ": the crafted entry changed what the program saw";
    EXPECT_EQ(get(after, "corrupt") - get(before, "corrupt"), 1) << delta;
    EXPECT_EQ(get(after, "hits") - get(before, "hits"), 0) << delta;
    EXPECT_EQ(get(after, "misses") - get(before, "misses"), 1) << delta << ": not recompiled";
    EXPECT_EQ(get(after, "stores") - get(before, "stores"), 1) << delta;
    EXPECT_EQ(probe({"ptx"}, shim_env(dir.path())).out, direct.out);  // served from the fresh entry
    EXPECT_EQ(get(counters_of(dir.path()), "hits") - get(after, "hits"), 1) << delta;
  }
}

TEST(Shim, TruncatedStoreNeverCrashesTheHostAndIsReplaced) {
  TempDir dir;
  const ProcessResult direct = probe({"trivial", "template", "threads"}, {});
  ASSERT_EQ(probe({"trivial", "template", "threads"}, shim_env(dir.path())).out, direct.out);
  const std::string data = dir.path() + "/store/data.mdb";
  std::filesystem::resize_file(data, std::filesystem::file_size(data) / 2);  // a copy cut short
  const ProcessResult after = probe({"trivial", "template", "threads"}, shim_env(dir.path()));
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, direct.out);
  EXPECT_NE(after.err.find("moved aside"), std::string::npos) << after.err;
  EXPECT_EQ(probe({"trivial", "template", "threads"}, shim_env(dir.path())).out, direct.out);
  EXPECT_GT(get(counters_of(dir.path()), "hits"), 0);
}

TEST(Shim, CacheDirectoryWritableByOthersIsRefusedOnce) {
  TempDir dir;
  chmod(dir.path().c_str(), 0777);
  const ProcessResult direct = probe({"trivial", "template"}, {});
  const ProcessResult shimmed = probe({"trivial", "template"}, shim_env(dir.path()));
  EXPECT_EQ(shimmed.out, direct.out);
  EXPECT_NE(shimmed.err.find("writable by group or others"), std::string::npos) << shimmed.err;
  EXPECT_EQ(std::count(shimmed.err.begin(), shimmed.err.end(), '\n'), 1) << shimmed.err;
  struct stat st;
  EXPECT_NE(stat((dir.path() + "/store").c_str(), &st), 0) << "nothing may be created in a refused directory";
  auto shared = shim_env(dir.path());
  shared["NVRTC_CACHE_SHARED"] = "1";
  EXPECT_EQ(probe({"trivial"}, shared).err, "");
}

TEST(Cli, VerifyReportsASoundCacheAndADamagedOne) {
  TempDir dir;
  ASSERT_EQ(probe({"trivial", "template", "lto"}, shim_env(dir.path())).exit_code, 0);
  const std::map<std::string, std::optional<std::string>> env = {{"NVRTC_CACHE_DIR", dir.path()}};
  const auto sound = run_process({NVRTC_CACHE_CLI_PATH, "verify"}, env);
  EXPECT_EQ(sound.exit_code, 0) << sound.out << sound.err;
  EXPECT_NE(sound.out.find("manifests           3 (0 malformed)"), std::string::npos) << sound.out;
  EXPECT_NE(sound.out.find("directory markers   3 "), std::string::npos) << "the LTO compile's: " << sound.out;
  EXPECT_NE(sound.out.find("unknown keys        0"), std::string::npos) << sound.out;
  EXPECT_NE(sound.out.find("verdict             ok"), std::string::npos);
  ASSERT_EQ(damage_every_entry(dir.path() + "/store"), 9);
  const auto damaged = run_process({NVRTC_CACHE_CLI_PATH, "verify"}, env);
  EXPECT_EQ(damaged.exit_code, 1) << damaged.out;
  EXPECT_NE(damaged.out.find("failed checksum     9"), std::string::npos) << damaged.out;
  EXPECT_NE(damaged.out.find("DAMAGED"), std::string::npos);
}

TEST(Shim, DisabledShimPassesEverythingThrough) {
  TempDir dir;
  auto env = shim_env(dir.path());
  env["NVRTC_CACHE_DISABLE"] = "1";
  const ProcessResult direct = probe({"trivial", "template"}, {});
  const ProcessResult shimmed = probe({"trivial", "template"}, env);
  ASSERT_EQ(shimmed.exit_code, 0) << shimmed.err;
  ASSERT_NE(shimmed.out.find("compile rc=0"), std::string::npos) << "nothing was compiled: " << shimmed.out;
  EXPECT_EQ(direct.out, shimmed.out);
  struct stat st;
  EXPECT_NE(stat((dir.path() + "/store").c_str(), &st), 0) << "a disabled shim created the store";
}

TEST(Shim, UnusableCacheDirectoryFailsOpenWithOneMessage) {
  TempDir dir;
  const std::string blocker = dir.path() + "/file";
  std::ofstream(blocker) << "not a directory";
  auto env = shim_env(blocker + "/cache");  // cannot be created: a path component is a file
  const ProcessResult direct = probe({"trivial", "template", "threads"}, {});
  const ProcessResult shimmed = probe({"trivial", "template", "threads"}, env);
  EXPECT_EQ(shimmed.exit_code, 0);
  EXPECT_EQ(direct.out, shimmed.out);
  std::istringstream lines(shimmed.err);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) ++count;
  EXPECT_EQ(count, 1) << shimmed.err;
  EXPECT_NE(shimmed.err.find("cannot open the cache"), std::string::npos) << shimmed.err;
}

TEST(Shim, BadSettingsGetOneMessageNamingTheVariable) {
  TempDir dir;
  auto env = shim_env(dir.path());
  env["NVRTC_CACHE_LOG"] = "loud";
  env["NVRTC_CACHE_MAX_SIZE"] = "huge";
  const ProcessResult direct = probe({"trivial"}, {});
  const ProcessResult shimmed = probe({"trivial"}, env);
  EXPECT_EQ(direct.out, shimmed.out);
  EXPECT_NE(shimmed.err.find("NVRTC_CACHE_LOG='loud'"), std::string::npos) << shimmed.err;
  EXPECT_NE(shimmed.err.find("NVRTC_CACHE_MAX_SIZE='huge'"), std::string::npos) << shimmed.err;
  EXPECT_EQ(get(counters_of(dir.path()), "stores"), 1);
}

// A misspelled variable's setting is not applied: the shim says so once per process, on its log
// (stderr), never stdout, with the variable it likely means; another tool's NVRTC_CACHE_* variable
// is named only at info.
TEST(Shim, AMisspelledVariableIsSaidOnceWithWhatItLikelyMeans) {
  TempDir dir;
  auto env = shim_env(dir.path());
  env["NVRTC_CACHE_MAXSIZE"] = "1G";
  env["NVRTC_CACHE_SOME_OTHER_TOOLS_SETTING"] = "1";
  const ProcessResult direct = probe({"trivial"}, {});
  const ProcessResult shimmed = probe({"trivial", "cubin", "template"}, env);
  EXPECT_EQ(shimmed.exit_code, 0) << shimmed.err;
  EXPECT_EQ(probe({"trivial"}, env).out, direct.out);
  const std::string message =
      "NVRTC_CACHE_MAXSIZE is not a variable nvrtc-cache reads; did you mean NVRTC_CACHE_MAX_SIZE?";
  const std::size_t first = shimmed.err.find(message);
  EXPECT_NE(first, std::string::npos) << shimmed.err;
  EXPECT_EQ(shimmed.err.find(message, first + 1), std::string::npos) << "said more than once: " << shimmed.err;
  EXPECT_EQ(shimmed.out.find("NVRTC_CACHE_MAXSIZE"), std::string::npos);
  EXPECT_EQ(shimmed.err.find("SOME_OTHER_TOOLS"), std::string::npos) << shimmed.err;
  env["NVRTC_CACHE_LOG"] = "info";
  EXPECT_NE(probe({"trivial"}, env).err.find("NVRTC_CACHE_SOME_OTHER_TOOLS_SETTING is not a variable"),
            std::string::npos);
  EXPECT_EQ(get(counters_of(dir.path()), "stores"), 3);
}

TEST(Shim, DebugLogGoesToTheLogFileNeverStdout) {
  TempDir dir;
  auto env = shim_env(dir.path());
  env["NVRTC_CACHE_LOG"] = "debug";
  env["NVRTC_CACHE_LOG_FILE"] = dir.path() + "/log.txt";
  const ProcessResult direct = probe({"trivial"}, {});
  const ProcessResult cold = probe({"trivial"}, env);
  const ProcessResult warm = probe({"trivial"}, env);
  EXPECT_EQ(direct.out, cold.out);
  EXPECT_EQ(direct.out, warm.out);
  EXPECT_EQ(cold.err, "");
  std::ifstream log(dir.path() + "/log.txt");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(": no manifest"), std::string::npos) << text;  // the miss says why
  EXPECT_NE(text.find("stored "), std::string::npos) << text;
  EXPECT_NE(text.find("hit "), std::string::npos) << text;
  // Each line names the program and the key `inspect` takes.
  std::smatch hit;
  ASSERT_TRUE(std::regex_search(text, hit, std::regex("hit program '([^']*)' \\(key ([0-9a-f]{64})\\)"))) << text;
  EXPECT_FALSE(hit[1].str().empty());
  const EnvVars cli_env = {{"NVRTC_CACHE_DIR", dir.path()}};
  for (const std::string& key : {hit[2].str(), hit[2].str().substr(0, 8)}) {
    const ProcessResult inspected = run_process({NVRTC_CACHE_CLI_PATH, "inspect", key}, cli_env);
    EXPECT_EQ(inspected.exit_code, 0) << key << "\n" << inspected.err;
    EXPECT_NE(inspected.out.find(hit[1].str()), std::string::npos) << inspected.out;
  }
}

TEST(Cli, RunPreloadsTheShimKeepsLdPreloadAndPassesTheExitCode) {
  TempDir dir;
  std::map<std::string, std::optional<std::string>> env = {{"NVRTC_CACHE_DIR", dir.path()},
                                                           {"LD_PRELOAD", "libm.so.6"}};
  const auto echo = run_process({NVRTC_CACHE_CLI_PATH, "run", "--", "/bin/sh", "-c", "echo $LD_PRELOAD"}, env);
  EXPECT_EQ(echo.exit_code, 0);
  EXPECT_EQ(echo.out, std::string(NVRTC_CACHE_SHIM_PATH) + ":libm.so.6\n");
  EXPECT_EQ(run_process({NVRTC_CACHE_CLI_PATH, "run", "--", "/bin/sh", "-c", "exit 7"}, env).exit_code, 7);
  EXPECT_EQ(run_process({NVRTC_CACHE_CLI_PATH, "run", "--", "/nonexistent/program"}, env).exit_code, 127);
  // --proxy runs the command as a child: its exit status and its death by a signal are passed on.
  EXPECT_EQ(run_process({NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", "/bin/sh", "-c", "exit 7"}, env).exit_code, 7);
  EXPECT_EQ(run_process({NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", "/nonexistent/program"}, env).exit_code, 127);
  EXPECT_EQ(
      run_process({NVRTC_CACHE_CLI_PATH, "run", "--proxy", "--", "/bin/sh", "-c", "kill -TERM $$"}, env).exit_code,
      -SIGTERM);
}

TEST(Cli, RunReachesGrandchildrenThroughShellScripts) {
  const std::string python = python_binary("python3");
  ASSERT_FALSE(python.empty());
  ASSERT_FALSE(needs_nvrtc(python)) << python << " loads NVRTC through ctypes, not as a startup dependency";
  TempDir dir;
  const std::map<std::string, std::optional<std::string>> env = {{"NVRTC_CACHE_DIR", dir.path()}};
  // sh -> sh -> exec python3 (ctypes), as wrapper scripts do.
  const std::string script =
      std::string("sh -c 'exec python3 ") + NVRTC_CACHE_SOURCE_DIR + "/tests/data/python/ctypes_client.py'";
  const std::vector<std::string> argv = {NVRTC_CACHE_CLI_PATH, "run", "--", "/bin/sh", "-c", script};
  const auto direct = run_process({"/bin/sh", "-c", script}, {});
  const auto cold = run_process(argv, env);
  const auto warm = run_process(argv, env);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(direct.out, cold.out);
  EXPECT_EQ(direct.out, warm.out);
  EXPECT_EQ(get(counters_of(dir.path()), "hits"), 1);
}

TEST(Cli, RunSaysWhenTheProgramIsSetuidOrTheShimIsMissing) {
  TempDir dir;
  const std::string program = dir.path() + "/setuid-true";
  std::filesystem::copy_file("/bin/true", program);
  chmod(program.c_str(), 04755);
  const auto setuid = run_process({NVRTC_CACHE_CLI_PATH, "run", "--", program}, {{"NVRTC_CACHE_DIR", dir.path()}});
  EXPECT_EQ(setuid.exit_code, 0);
  EXPECT_NE(setuid.err.find("setuid"), std::string::npos) << setuid.err;
  const auto missing =
      run_process({NVRTC_CACHE_CLI_PATH, "run", "--", "/bin/true"}, {{"NVRTC_CACHE_SHIM", dir.path() + "/nope.so"}});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("cannot find the shim"), std::string::npos) << missing.err;
}

TEST(Cli, StatsCountAcrossProcessesAndClearEmptiesTheCache) {
  TempDir dir;
  std::map<std::string, std::optional<std::string>> env = {{"NVRTC_CACHE_DIR", dir.path()},
                                                           {"PROBE_TIME_FILE", dir.path() + "/time.csv"}};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(
        run_process({NVRTC_CACHE_CLI_PATH, "run", "--", NVRTC_PROBE_PATH, "trivial", "time_option"}, env).exit_code, 0);
  }
  const auto stats = run_process({NVRTC_CACHE_CLI_PATH, "stats", "--json"}, env);
  ASSERT_EQ(stats.exit_code, 0);
  for (const char* expected : {"\"hits\": 2", "\"misses\": 1", "\"uncacheable\": 3", "\"stores\": 1", "\"errors\": 0",
                               "\"entries\": 2", "\"saved_seconds\": "}) {
    EXPECT_NE(stats.out.find(expected), std::string::npos) << expected << " in " << stats.out;
  }
  EXPECT_TRUE(std::regex_search(stats.out, std::regex("\"bytes\": [1-9][0-9]*")));
  const auto human = run_process({NVRTC_CACHE_CLI_PATH, "stats"}, env);
  EXPECT_NE(human.out.find("hit rate          66.7%"), std::string::npos) << human.out;
  EXPECT_EQ(run_process({NVRTC_CACHE_CLI_PATH, "clear"}, env).exit_code, 0);
  const auto after = run_process({NVRTC_CACHE_CLI_PATH, "stats", "--json"}, env);
  EXPECT_NE(after.out.find("\"entries\": 0"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("\"hits\": 0"), std::string::npos) << after.out;
}

}  // namespace
}  // namespace nvrtc_cache
