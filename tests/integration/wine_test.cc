// The Windows NVRTC under Wine: the mingw-built clients (tests/clients/windows/nvrtc_client.cc, reached by
// LoadLibraryA and through an import library) run the portable corpus (tests/support/probe_corpus.h) directly
// against the real nvrtc64_130_0.dll, then with an nvrtc64_130_0.dll placed beside the .exe (first in
// the DLL search order) cold and warm: every getter byte-identical to the direct run, the warm run
// served from the cache, and an edit of a header on disk noticed. The DLL beside the .exe is the
// proxy from NVRTC_CACHE_WINDOWS_PREFIX/bin (scripts/windows-build.sh PREFIX), which finds the real
// DLL through NVRTC_CACHE_REAL_NVRTC and keeps its cache in NVRTC_CACHE_DIR; its counters are read
// with PREFIX/bin/nvrtc-cache.exe stats --json. Without a PREFIX the real DLL itself is placed beside
// the .exe (the placement and comparison are exercised) and the tests skip, saying so, before the
// cache assertions. Also: the import watch under Wine (tests/clients/windows/import_watch_check.cc), and
// with tests/clients/windows/first_hit_client.cc the data file growing with use (real processes, one
// of them holding the store open across the growth) and the first hit of a fresh process; and with
// tests/clients/windows/loader_client.cc, `nvrtc-cache.exe run` reaching the loading styles a proxy
// beside the .exe does not (WineLauncher).
// Shared tiers (WineSharedTier): two Wine "nodes" (separate cache directories) share a real
// redis-server on loopback (signed values) or a file:// directory, and one serves the other's results
// exactly; TLS and HTTP tier URLs are refused with one line each; a Redis tier that is down fails open
// at once.
// Single-flight between processes (WineSingleFlight: one waiting for another's compile; a holder
// killed holding its claim) and compile records (Wine.CompileRecordsAreWritten).
// Preconditions, from scripts/windows-nvrtc.sh DIR: NVRTC_CACHE_WINE_NVRTC_DIR (the Windows NVRTC and
// DIR/wineprefix), NVRTC_CACHE_WINE (the loader); without them the tests skip (fail where
// NVRTC_CACHE_REQUIRE_PYPI=1).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/compile_record.h"
#include "tests/support/harness.h"
#include "tests/support/redis_server.h"
#include "tests/support/wine_paths.h"

namespace nvrtc_cache::testing {
namespace {

namespace fs = std::filesystem;

// The functions the import watch patches (shim/windows/watched_kernel32.def).
constexpr int kWatchedKernel32Count = 0
#define NVRTC_CACHE_KERNEL32(name, kind) +1
#include "shim/windows/watched_kernel32.def"
#undef NVRTC_CACHE_KERNEL32
    ;

// The scenarios every run compiles.
const std::vector<std::string> kCorpus = {
    "trivial",        "ptx",         "cubin",     "lto",       "template",  "headers", "compile_error", "warnings",
    "invalid_option", "include_dir", "null_name", "recompile", "bad_inputs"};

std::string hex_of(const std::string& text) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

class Wine : public ::testing::Test {
 protected:
  void SetUp() override {
    nvrtc_dir_ = env_or_empty("NVRTC_CACHE_WINE_NVRTC_DIR");
    loader_ = env_or_empty("NVRTC_CACHE_WINE");
    bin_ = NVRTC_CACHE_WINDOWS_BIN_DIR;
    if (nvrtc_dir_.empty() || loader_.empty()) {
      NVRTC_CACHE_SKIP_WITHOUT_PYPI(
          "the Windows NVRTC and Wine are not prepared (eval \"$(scripts/windows-nvrtc.sh DIR)\")");
    }
    if (bin_.empty())
      NVRTC_CACHE_SKIP_WITHOUT_PYPI("the Windows test programs were not built (no mingw-w64 at configure)");
    ASSERT_TRUE(fs::exists(nvrtc_dir_ + "/nvrtc64_130_0.dll"));
    ASSERT_TRUE(fs::exists(loader_));
    prefix_ = env_or_empty("NVRTC_CACHE_WINDOWS_PREFIX");
    write_header(42);
  }

  void write_header(int value) {
    std::ofstream(include_.path() + "/probe_dep.h") << "#pragma once\n#define PROBE_VALUE " << value << "\n";
  }

  // Runs a Windows program under Wine; `extra` adds to the environment.
  ProcessResult run(const std::vector<std::string>& argv, EnvVars extra = {}) {
    EnvVars env = {{"WINEPREFIX", nvrtc_dir_ + "/wineprefix"},
                   {"WINEDEBUG", "-all"},
                   {"WINEDLLOVERRIDES", "mscoree,mshtml="},
                   {"WINEPATH", windows_path(nvrtc_dir_)},
                   {"PROBE_INCLUDE_DIR", windows_path(include_.path())}};
    for (auto& [name, value] : extra) env[name] = value;
    std::vector<std::string> command = {loader_};
    command.insert(command.end(), argv.begin(), argv.end());
    return run_process(command, env);
  }

  ProcessResult client(const std::string& exe, const std::vector<std::string>& scenarios, EnvVars extra = {}) {
    std::vector<std::string> argv = {exe};
    argv.insert(argv.end(), scenarios.begin(), scenarios.end());
    ProcessResult r = run(argv, std::move(extra));
    EXPECT_EQ(r.exit_code, 0) << exe << ": " << r.err;
    return r;
  }

  std::string direct_client(const std::string& name) { return bin_ + "/" + name + ".exe"; }

  // `name`.exe copied into its own directory, with the DLL under test beside it.
  std::string client_beside_dll(const std::string& name) {
    const std::string exe = beside_.path() + "/" + name + ".exe";
    fs::copy_file(direct_client(name), exe, fs::copy_options::overwrite_existing);
    const std::string dll = beside_.path() + "/nvrtc64_130_0.dll";
    if (!fs::exists(dll)) {
      if (prefix_.empty()) {
        fs::create_symlink(nvrtc_dir_ + "/nvrtc64_130_0.dll", dll);
      } else {
        fs::copy_file(prefix_ + "/bin/nvrtc64_130_0.dll", dll);
      }
    }
    return exe;
  }

  // What the DLL beside the .exe needs: the real DLL, its cache.
  EnvVars cache_env() {
    return {{"NVRTC_CACHE_REAL_NVRTC", windows_path(nvrtc_dir_ + "/nvrtc64_130_0.dll")},
            {"NVRTC_CACHE_DIR", windows_path(cache_.path())}};
  }

  // The proxy's counters (hits, misses), from its CLI.
  nlohmann::json stats() {
    ProcessResult r = run({prefix_ + "/bin/nvrtc-cache.exe", "stats", "--json"}, cache_env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  bool with_proxy() const { return !prefix_.empty(); }

  std::string nvrtc_dir_, loader_, bin_, prefix_;
  TempDir include_, beside_, cache_;
};

// What every dump must show for the corpus to have run for real.
void expect_corpus_ran(const std::string& out) {
  for (const std::string& scenario : kCorpus)
    EXPECT_NE(out.find("### " + scenario + "\n"), std::string::npos) << scenario;
  EXPECT_NE(out.find("compile rc=0"), std::string::npos);
  EXPECT_NE(out.find("compile rc=6"), std::string::npos) << "the compile error (NVRTC_ERROR_COMPILATION)";
  EXPECT_NE(out.find(hex_of("undefined_function")), std::string::npos) << "the error's log";
  EXPECT_NE(out.find("lowered[scale<float, 2>] rc=0 name=_Z5scaleIfLi2EEvPT_"), std::string::npos);
  EXPECT_NE(out.find(hex_of("42;")), std::string::npos) << "the -I header's value in the PTX";
}

TEST_F(Wine, DirectClientsAgreeAndRepeat) {
  const ProcessResult loaded = client(direct_client("nvrtc_client_loadlibrary"), kCorpus);
  const ProcessResult linked = client(direct_client("nvrtc_client_linked"), kCorpus);
  expect_corpus_ran(loaded.out);
  EXPECT_TRUE(loaded.out == linked.out) << "LoadLibraryA and import-linked clients differ";
  EXPECT_TRUE(client(direct_client("nvrtc_client_loadlibrary"), kCorpus).out == loaded.out) << "not deterministic";
}

class WineThroughDll : public Wine, public ::testing::WithParamInterface<std::string> {};

TEST_P(WineThroughDll, ColdAndWarmIdenticalToDirect) {
  const std::string direct = client(direct_client(GetParam()), kCorpus).out;
  expect_corpus_ran(direct);
  const std::string exe = client_beside_dll(GetParam());
  const std::string cold = client(exe, kCorpus, cache_env()).out;
  EXPECT_TRUE(cold == direct) << "cold run differs from the real NVRTC";
  const nlohmann::json after_cold = with_proxy() ? stats() : nlohmann::json();
  const std::string warm = client(exe, kCorpus, cache_env()).out;
  EXPECT_TRUE(warm == direct) << "warm run differs from the real NVRTC";
  if (!with_proxy())
    GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset): the real DLL beside the .exe matched "
                    "the direct run; the cache assertions were not made";
  const nlohmann::json after_warm = stats();
  EXPECT_GT(after_cold.value("misses", 0), 0) << after_cold.dump();
  EXPECT_GT(after_warm.value("hits", 0), after_cold.value("hits", 0)) << "warm run not served from the cache";
  EXPECT_EQ(after_warm.value("misses", 0), after_cold.value("misses", 0)) << "warm run missed: " << after_warm.dump();
}

TEST_P(WineThroughDll, HeaderEditNoticed) {
  const std::string exe = client_beside_dll(GetParam());
  const std::string first = client(exe, {"include_dir"}, cache_env()).out;
  ASSERT_NE(first.find(hex_of("42;")), std::string::npos);
  EXPECT_TRUE(client(exe, {"include_dir"}, cache_env()).out == first);
  const nlohmann::json before = with_proxy() ? stats() : nlohmann::json();
  write_header(43);
  const std::string edited = client(exe, {"include_dir"}, cache_env()).out;
  EXPECT_EQ(edited.find(hex_of("42;")), std::string::npos) << "stale: the old header's value";
  EXPECT_NE(edited.find(hex_of("43;")), std::string::npos);
  EXPECT_TRUE(edited == client(direct_client(GetParam()), {"include_dir"}).out) << "differs from the real NVRTC";
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset): the cache assertions were not made";
  EXPECT_EQ(stats().value("misses", 0), before.value("misses", 0) + 1) << "the edit was not a miss";
}

INSTANTIATE_TEST_SUITE_P(Clients, WineThroughDll, ::testing::Values("nvrtc_client_loadlibrary", "nvrtc_client_linked"));

// The import watch on the real DLL, under Wine: every watched function patched in NVRTC's import table,
// the header included through -I among what NVRTC was seen opening, the host's own calls unobserved.
TEST_F(Wine, ImportWatchSeesTheIncludedHeader) {
  const std::string host_probe = windows_path(include_.path() + "/host_probe.txt");
  std::ofstream(include_.path() + "/host_probe.txt") << "host\n";
  const ProcessResult r = run({bin_ + "/import_watch_check.exe", windows_path(include_.path()), host_probe});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string count = std::to_string(kWatchedKernel32Count);
  EXPECT_NE(r.out.find("patch redirected=" + count + " already=0 left=0 parsed=1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("again redirected=0 already=" + count + " left=0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compile rc=0\n"), std::string::npos) << r.out;
  const std::string header = windows_path(include_.path() + "/probe_dep.h");
  EXPECT_NE(r.out.find("event CreateFileW kind=0 ok=1 write=0 subject=" + header + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host_probe_observed=0\n"), std::string::npos) << r.out;
  // The builtins DLL imports CreateFileW, FindFirstFileExW and GetEnvironmentStringsW
  // (tests/integration/windows_import_coverage_test.cc): all three patched, none left.
  EXPECT_NE(r.out.find("builtins loaded=1 redirected=3 already=0 left=0 parsed=1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("builtins again redirected=0 already=3 left=0\n"), std::string::npos) << r.out;
}

// The store's fault guard on Windows (platform/fault_guard_windows.cc): an access violation or an
// in-page error inside a guarded call is a `false` result, never a crash, however often; sound and
// nested calls run to the end; the last-error value is kept (tests/clients/windows/fault_guard_check.cc).
// What a check program printed (in text mode: CR LF), with Linux's line ends; it must exit 0.
std::string printed_by_check(const ProcessResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  std::string out = r.out;
  std::erase(out, '\r');
  return out;
}

TEST_F(Wine, FaultGuardTurnsFaultsIntoFailedCalls) {
  EXPECT_EQ(printed_by_check(run({bin_ + "/fault_guard_check.exe"})),
            "unmapped=0\nunmapped_again=0\nin_page=0\nsound=1\nescaped=0\nnested inner=0 outer=1\n"
            "last_error=1234\nreached=2\n");
}

// LMDB names its lock file's mutexes from the volume serial and file index GetFileInformationByHandle
// gives; on Windows the store answers that call with the store directory's serial, asking no volume
// (store/lmdb/lock_file_volume.h): the same answer as the real call for a file on that volume, only
// the serial replaced for another hint, the real call without one
// (tests/clients/windows/lock_file_information_check.cc).
TEST_F(Wine, LockFileInformationWithoutAVolumeQuery) {
  EXPECT_EQ(
      printed_by_check(run({bin_ + "/lock_file_information_check.exe", windows_path(include_.path() + "/lock.mdb")})),
      "hinted=1\nother=1\nunhinted=1\nhinted_equal=1\nother_serial=1 other_rest_equal=1\nunhinted_equal=1\n"
      "size=4 links=1\n");
}

// Every process but a lock file's first opens LMDB's mutexes by name, and LMDB's close closes them
// before it releases the lock file: an open while the last other user closes found them gone
// (mdb_env_open: ERROR_FILE_NOT_FOUND, in a third or more of the opens here) until the store made them again
// (store/lmdb/lock_file_information_windows.h). Two processes open one environment, add one to a
// counter and close it, 300 times each: every open succeeds, and the counter is the sum of their
// commits (tests/clients/windows/lmdb_reopen_check.cc).
TEST_F(Wine, LmdbOpensWhileAnotherProcessCloses) {
  const std::string exe = bin_ + "/lmdb_reopen_check.exe";
  if (!fs::exists(exe)) GTEST_SKIP() << "not built (no LMDB source or no mingw-w64 C compiler)";
  const TempDir store;
  const auto counts = [](const ProcessResult& r) {
    int opens = -1, failed = -1, commits = -1;
    unsigned long long counter = 0;
    std::sscanf(r.out.c_str(), "opens %d failed %d commits %d counter %llu", &opens, &failed, &commits, &counter);
    return std::make_tuple(opens, failed, commits, counter);
  };
  ProcessResult first, second;
  std::thread other([&] { first = run({exe, windows_path(store.path()), "300"}); });
  second = run({exe, windows_path(store.path()), "300"});
  other.join();
  for (const ProcessResult* r : {&first, &second}) {
    const auto [opens, failed, commits, counter] = counts(*r);
    EXPECT_EQ(r->exit_code, 0) << r->err;
    EXPECT_EQ(opens, 300) << r->out;
    EXPECT_EQ(failed, 0) << "opens failed while another process closed: " << r->out << r->err;
    EXPECT_EQ(commits, 300) << r->out;
  }
  const auto [opens, failed, commits, counter] = counts(run({exe, windows_path(store.path()), "0"}));
  EXPECT_EQ(counter, 600u) << "the writers were not serialised: commits were lost";
}

// The proxy with no NVRTC_CACHE_DIR keeps its cache in %LOCALAPPDATA%\nvrtc-cache (Wine sets
// LOCALAPPDATA from its prefix, so that of the scratch prefix is used, and emptied first).
TEST_F(Wine, ProxyDefaultCacheDirectory) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string exe = client_beside_dll("nvrtc_client_loadlibrary");
  const EnvVars env = {{"NVRTC_CACHE_REAL_NVRTC", windows_path(nvrtc_dir_ + "/nvrtc64_130_0.dll")}};
  const ProcessResult echoed = run({"cmd.exe", "/c", "echo", "%LOCALAPPDATA%"}, env);
  ASSERT_EQ(echoed.exit_code, 0) << echoed.err;
  std::string local_app_data = echoed.out;
  while (!local_app_data.empty() && (local_app_data.back() == '\n' || local_app_data.back() == '\r')) {
    local_app_data.pop_back();
  }
  ASSERT_FALSE(local_app_data.empty());
  const ProcessResult cleared = run({prefix_ + "/bin/nvrtc-cache.exe", "clear"}, env);
  ASSERT_EQ(cleared.exit_code, 0) << cleared.err;
  const std::string cold = client(exe, {"trivial"}, env).out;
  EXPECT_TRUE(client(exe, {"trivial"}, env).out == cold);
  const ProcessResult r = run({prefix_ + "/bin/nvrtc-cache.exe", "stats", "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ(j.value("directory", ""), local_app_data + "\\nvrtc-cache") << r.out;
  EXPECT_EQ(j.value("misses", 0), 1) << r.out;
  EXPECT_EQ(j.value("hits", 0), 1) << r.out;
}

// A damaged store (garbage over its meta pages, or over the pages after them) never changes what a
// compile returns: the proxy compiles exactly as the real NVRTC, and the store is moved aside
// (store.corrupt-*) and rebuilt, as on Linux (store/cache_directory.h).
TEST_F(Wine, DamagedStoreFailsOpenAndIsMovedAside) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::vector<std::string> scenarios = {"trivial", "ptx", "headers"};
  const std::string direct = client(direct_client("nvrtc_client_loadlibrary"), scenarios).out;
  const std::string exe = client_beside_dll("nvrtc_client_loadlibrary");
  for (const std::uint64_t damaged_from : {std::uint64_t{0}, std::uint64_t{8192}}) {
    SCOPED_TRACE("garbage from byte " + std::to_string(damaged_from));
    const TempDir cache;
    const EnvVars env = {{"NVRTC_CACHE_REAL_NVRTC", windows_path(nvrtc_dir_ + "/nvrtc64_130_0.dll")},
                         {"NVRTC_CACHE_DIR", windows_path(cache.path())}};
    ASSERT_TRUE(client(exe, scenarios, env).out == direct);
    const std::string data = cache.path() + "/store/data.mdb";
    ASSERT_TRUE(fs::exists(data));
    const std::uint64_t size = fs::file_size(data);
    ASSERT_GT(size, damaged_from);
    {
      std::fstream file(data, std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(static_cast<std::streamoff>(damaged_from));
      std::string garbage(size - damaged_from, '\0');
      for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(0xA5 ^ (i * 131));
      file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    const ProcessResult damaged = client(exe, scenarios, env);
    EXPECT_TRUE(damaged.out == direct) << "a damaged store changed a compile's result";
    // Said once, on stderr (never stdout), like the Linux shim.
    EXPECT_NE(damaged.err.find("nvrtc-cache["), std::string::npos) << "the proxy said nothing: " << damaged.err;
    EXPECT_NE(damaged.err.find("moved aside"), std::string::npos) << damaged.err;
    EXPECT_EQ(damaged.out.find("nvrtc-cache["), std::string::npos);
    EXPECT_TRUE(client(exe, scenarios, env).out == direct);
    std::size_t moved_aside = 0;
    for (const auto& entry : fs::directory_iterator(cache.path())) {
      moved_aside += entry.path().filename().string().starts_with("store.corrupt-") ? 1 : 0;
    }
    EXPECT_GE(moved_aside, 1u) << "the damaged store was not moved aside";
    const ProcessResult r = run({prefix_ + "/bin/nvrtc-cache.exe", "stats", "--json"}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_GT(j.value("entries", 0), 0) << "not rebuilt: " << r.out;
    EXPECT_GT(j.value("hits", 0), 0) << "the rebuilt store served nothing: " << r.out;
    const ProcessResult verified = run({prefix_ + "/bin/nvrtc-cache.exe", "verify"}, env);
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    EXPECT_NE(verified.out.find("verdict             ok"), std::string::npos) << verified.out;
  }
}

// The settings come from the one table (core/settings.h) with its files: a configuration file named
// by NVRTC_CACHE_CONFIG sets the cache directory and max_size = 1M, for the proxy and the CLI alike;
// programs whose PTX is a few hundred KiB each then fill the store past 75% of the cap, and eviction
// keeps it under the cap (every compile still exact).
TEST_F(Wine, ConfigFileSetsDirectoryAndMaxSizeIsHonoured) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const TempDir config_dir;
  const std::string cache_dir = cache_.path() + "/from-config";
  std::ofstream(config_dir.path() + "/nvrtc-cache.conf")
      << "# the Wine test's settings (entries uncompressed: the cap is measured in PTX as it is)\ncache_dir = "
      << windows_path(cache_dir) << "\nmax_size = 1M\ncompression = 0\n";
  const EnvVars env = {{"NVRTC_CACHE_REAL_NVRTC", windows_path(nvrtc_dir_ + "/nvrtc64_130_0.dll")},
                       {"NVRTC_CACHE_CONFIG", windows_path(config_dir.path() + "/nvrtc-cache.conf")}};
  const std::string exe = client_beside_dll("nvrtc_client_loadlibrary");
  constexpr int kPrograms = 8;
  for (int value = 1; value <= kPrograms; ++value) {
    // A header whose initialised device array makes the PTX about 150 KiB.
    std::ofstream header(include_.path() + "/probe_dep.h");
    header << "#pragma once\n#define PROBE_VALUE " << value << "\n__device__ int probe_fill[12000] = {";
    for (int i = 0; i < 12000; ++i) header << (i * 7919 + value) % 100003 << ",";
    header << "};\n";
    header.close();
    const std::string cached = client(exe, {"include_dir"}, env).out;
    EXPECT_TRUE(cached == client(direct_client("nvrtc_client_loadlibrary"), {"include_dir"}).out) << value;
  }
  const ProcessResult r = run({prefix_ + "/bin/nvrtc-cache.exe", "stats", "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ(j.value("directory", ""), windows_path(cache_dir)) << r.out;
  EXPECT_TRUE(fs::exists(cache_dir + "/store/data.mdb"));
  EXPECT_EQ(j.value("map_bytes", 0), 1 << 20) << r.out;
  EXPECT_LE(j.value("map_used_bytes", 0), 1 << 20) << r.out;
  EXPECT_LE(j.value("bytes", 0), 1 << 20) << r.out;
  EXPECT_EQ(j.value("misses", 0), kPrograms) << r.out;
  EXPECT_GT(j.value("entries", 0), 0) << r.out;
  EXPECT_LT(j.value("entries", 0), kPrograms) << "nothing was evicted: " << r.out;
  EXPECT_LE(fs::file_size(cache_dir + "/store/data.mdb"), std::uintmax_t{1} << 20);
}

// A misspelled setting variable is named at start with the one meant, on stderr (never stdout), and
// changes nothing a compile returns.
TEST_F(Wine, MisspelledVariableIsNamed) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string direct = client(direct_client("nvrtc_client_loadlibrary"), {"trivial"}).out;
  EnvVars env = cache_env();
  env["NVRTC_CACHE_MAXSIZE"] = "1G";
  const ProcessResult r = client(client_beside_dll("nvrtc_client_loadlibrary"), {"trivial"}, env);
  EXPECT_TRUE(r.out == direct);
  EXPECT_NE(r.err.find("NVRTC_CACHE_MAXSIZE is not a variable nvrtc-cache reads; did you mean NVRTC_CACHE_MAX_SIZE?"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("nvrtc-cache["), std::string::npos);
}

// Without a real NVRTC the proxy fails open: NVRTC's own error code from every function, no crash.
TEST_F(Wine, ProxyWithoutRealNvrtcFailsOpen) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  for (const std::string name : {"nvrtc_client_loadlibrary", "nvrtc_client_linked"}) {
    const std::string exe = client_beside_dll(name);
    const ProcessResult r =
        run({exe, "trivial", "bad_inputs"}, {{"NVRTC_CACHE_REAL_NVRTC", windows_path(include_.path() + "/missing.dll")},
                                             {"NVRTC_CACHE_DIR", windows_path(cache_.path())}});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_NE(r.out.find("### trivial\ncreate rc=11\ncompile rc=11\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("### bad_inputs\n"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace nvrtc_cache::testing

namespace nvrtc_cache::testing {
namespace {

constexpr std::uintmax_t kMiB = std::uintmax_t{1} << 20;

// first_hit_client's lines (tests/clients/windows/first_hit_client.cc) by program, without their
// timing: what each compile returned.
std::map<std::string, std::string> results_of(const std::string& out) {
  std::map<std::string, std::string> results;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t timing = line.find(" compile_ns ");
    const std::size_t after = timing == std::string::npos ? timing : line.find(' ', timing + 12);
    if (after == std::string::npos) continue;
    results[line.substr(0, timing)] = line.substr(after + 1);
  }
  return results;
}

std::vector<std::string> fill_steps(int first, int last) {
  std::vector<std::string> steps;
  for (int n = first; n <= last; ++n) steps.push_back("fill:" + std::to_string(n));
  return steps;
}

bool wait_for_file(const std::string& path, int seconds) {
  for (int waited = 0; waited < seconds * 10; ++waited) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// The data file grows with use (store/lmdb/map_growth.h): with max_size = 4G it is small after a
// few entries (LMDB on Windows makes data.mdb as large as its map), grows past that size as programs
// of about 150 KiB of PTX each are added, never more than one step beyond the pages in use; every
// hit stays byte-identical to the real NVRTC; and a second process that opened the store before the
// growth (waiting meanwhile) then serves a hit written in the grown part and stores a new program.
TEST_F(Wine, DataFileGrowsWithUseAndStaysExact) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  EnvVars env = cache_env();
  env["NVRTC_CACHE_MAX_SIZE"] = "4G";
  env["NVRTC_CACHE_COMPRESSION"] = "0";  // the sizes below are of the PTX as it is
  const std::string exe = client_beside_dll("first_hit_client");
  const std::string data = cache_.path() + "/store/data.mdb";
  auto stats_with_cap = [&] {  // the CLI with the same settings
    const ProcessResult r = run({prefix_ + "/bin/nvrtc-cache.exe", "stats", "--json"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  };
  const std::vector<std::string> all = [] {
    std::vector<std::string> steps = fill_steps(1, 24);
    steps.push_back("fill:40");
    return steps;
  }();
  const std::map<std::string, std::string> direct = results_of(client(direct_client("first_hit_client"), all).out);
  ASSERT_EQ(direct.size(), all.size());

  client(exe, fill_steps(1, 3), env);
  ASSERT_TRUE(fs::exists(data));
  const std::uintmax_t small = fs::file_size(data);
  EXPECT_LT(small, 4 * kMiB) << "the data file is not small after 3 entries";

  // A process that opens the store now (a hit), then waits while another grows it.
  const TempDir marks;
  ProcessResult waiting;
  std::thread opened_before([&] {
    waiting = run({exe, "fill:1", "mark:" + windows_path(marks.path() + "/ready"),
                   "wait:" + windows_path(marks.path() + "/go"), "fill:20", "fill:40"},
                  env);
  });
  const bool ready = wait_for_file(marks.path() + "/ready", 300);
  if (ready) client(exe, fill_steps(4, 24), env);
  std::ofstream(marks.path() + "/go") << "go\n";
  opened_before.join();
  ASSERT_TRUE(ready) << "the waiting process never opened the store: " << waiting.err;
  ASSERT_EQ(waiting.exit_code, 0) << waiting.err;

  const std::uintmax_t grown = fs::file_size(data);
  EXPECT_GT(grown, small) << "the data file did not grow";
  EXPECT_GT(grown, 3 * kMiB) << "21 entries of about 150 KiB do not fit";
  const nlohmann::json j = stats_with_cap();
  const std::uintmax_t used = j.value("map_used_bytes", std::uintmax_t{0});
  EXPECT_GT(used, 3 * kMiB) << j.dump();
  EXPECT_LE(grown, used + used / 4 + 2 * kMiB) << "more than one growth step beyond the pages in use: " << j.dump();
  EXPECT_EQ(j.value("map_bytes", std::uintmax_t{0}), 4096 * kMiB) << j.dump();

  // The waiting process: fill:1 and fill:20 hits (fill:20 written in the grown part), fill:40 stored.
  const std::map<std::string, std::string> waited = results_of(waiting.out);
  for (const std::string step : {"fill:1", "fill:20", "fill:40"}) {
    ASSERT_TRUE(waited.count(step)) << step << ": " << waiting.out;
    EXPECT_EQ(waited.at(step), direct.at(step)) << step;
  }
  EXPECT_EQ(j.value("hits", 0), 2) << j.dump();
  EXPECT_EQ(j.value("misses", 0), 25) << j.dump();

  // Every program again, warm: all hits, byte-identical to the real NVRTC.
  const std::map<std::string, std::string> warm = results_of(client(exe, all, env).out);
  EXPECT_EQ(warm, direct);
  const nlohmann::json after = stats_with_cap();
  EXPECT_EQ(after.value("hits", 0), 2 + static_cast<int>(all.size())) << after.dump();
  EXPECT_EQ(after.value("misses", 0), 25) << after.dump();
  EXPECT_EQ(fs::file_size(data), grown) << "hits grew the file";
}

// The store is opened on a thread of its own from the first NVRTC call on
// (shim/windows/store_open_ahead.h): processes that only ask for NVRTC's version and exit at once
// (the thread may be cut off anywhere in the open) exit cleanly and leave a usable cache; one that
// unloads the proxy right after its call still runs the thread to its end (it holds the module) and
// exits cleanly, the store opened by then; the cache then serves a miss and a hit exactly.
TEST_F(Wine, StoreOpenedAheadSurvivesEarlyExitAndUnload) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string exe = client_beside_dll("first_hit_client");
  for (int i = 0; i < 4; ++i) {
    const ProcessResult r = run({exe, "version"}, cache_env());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("version 13."), std::string::npos) << r.out;
  }
  const ProcessResult unloaded = run({exe, "version", "unload"}, cache_env());
  ASSERT_EQ(unloaded.exit_code, 0) << unloaded.err;
  EXPECT_NE(unloaded.out.find("unloaded"), std::string::npos) << unloaded.out;
  EXPECT_TRUE(fs::exists(cache_.path() + "/store/data.mdb")) << "no compile, yet the store was opened ahead";
  std::string real_result, cold, warm;
  real_result = results_of(client(direct_client("first_hit_client"), {}).out)["kernel"];
  cold = results_of(client(exe, {}, cache_env()).out)["kernel"];
  warm = results_of(client(exe, {}, cache_env()).out)["kernel"];
  ASSERT_FALSE(real_result.empty());
  EXPECT_EQ(cold, real_result);
  EXPECT_EQ(warm, real_result);
  const nlohmann::json counted = stats();
  EXPECT_EQ(counted.value("misses", 0), 1) << counted.dump();
  EXPECT_EQ(counted.value("hits", 0), 1) << counted.dump();
  EXPECT_EQ(run({prefix_ + "/bin/nvrtc-cache.exe", "verify"}, cache_env()).exit_code, 0);
}

// The first hit of a fresh process (a LoadLibrary client compiling a templated kernel with a name
// expression, one compile per process, the compile alone timed): byte-identical to the real NVRTC,
// served from the cache, and timed against the real compile (the median of 5 processes each, printed
// and recorded as test properties): at most 1 ms and at least 20 times faster; the hits are counted
// by every process, each exiting right after its hit (docs/platforms.md gives the figures).
TEST_F(Wine, FirstHitOfAFreshProcessIsExactAndTimed) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string exe = client_beside_dll("first_hit_client");
  constexpr int kRuns = 5;  // fresh processes per median
  auto median_of = [&](const std::string& program, const EnvVars& env, std::string* result) {
    std::vector<double> nanos;
    for (int run_index = 0; run_index < kRuns; ++run_index) {
      const std::string out = client(program, {}, env).out;
      const std::size_t at = out.find("compile_ns ");
      if (at == std::string::npos) return -1.0;
      nanos.push_back(std::strtod(out.c_str() + at + 11, nullptr));
      const std::string got = results_of(out)["kernel"];
      if (run_index > 0) {
        EXPECT_EQ(got, *result) << "run " << run_index;
      }
      *result = got;
    }
    std::sort(nanos.begin(), nanos.end());
    return nanos[kRuns / 2];
  };
  std::string real_result, warm_result;
  client(exe, {}, cache_env());  // the miss that stores it
  const nlohmann::json before = stats();
  ASSERT_EQ(before.value("misses", 0), 1) << before.dump();
  // The bar: at most 1 ms, at least 20 times faster than the real compile. This test runs alone
  // (RUN_SERIAL); a machine still busy with something else may miss a round, so up to five rounds
  // (each 5 fresh processes of each kind) are measured and the first that meets the bar passes.
  // NVRTC_CACHE_WINE_TIMING_BAR=0 (a loaded machine) asks only for 4x.
  const bool bar = env_or_empty("NVRTC_CACHE_WINE_TIMING_BAR") != "0";
  constexpr int kRounds = 5;
  std::string shown;
  bool met = false;
  int hits = 0;
  for (int round = 0; round < kRounds && !met; ++round) {
    const double real_ns = median_of(direct_client("first_hit_client"), {}, &real_result);
    ASSERT_FALSE(real_result.empty());
    const double hit_ns = median_of(exe, cache_env(), &warm_result);
    hits += kRuns;
    EXPECT_EQ(warm_result, real_result);
    ASSERT_GT(hit_ns, 0);
    ASSERT_GT(real_ns, 0);
    RecordProperty("first_hit_us", static_cast<int>(hit_ns / 1000));
    RecordProperty("real_compile_us", static_cast<int>(real_ns / 1000));
    std::printf("first hit of a fresh process: %.3f ms (median of %d); the real compile: %.1f ms (%.0fx)\n",
                hit_ns / 1e6, kRuns, real_ns / 1e6, real_ns / hit_ns);
    shown = "first hit " + std::to_string(hit_ns / 1e6) + " ms, real compile " + std::to_string(real_ns / 1e6) + " ms";
    met = bar ? hit_ns <= 1e6 && hit_ns * 20 <= real_ns : hit_ns * 4 <= real_ns;
  }
  EXPECT_TRUE(met) << shown << (bar ? " (the bar: at most 1 ms and 20x)" : " (at least 4x)");
  const nlohmann::json after = stats();
  // Every timed process was served by a hit: none compiled.
  EXPECT_EQ(after.value("hits", 0), before.value("hits", 0) + hits) << after.dump();
  EXPECT_EQ(after.value("misses", 0), before.value("misses", 0)) << after.dump();
}

}  // namespace
}  // namespace nvrtc_cache::testing

namespace nvrtc_cache::testing {
namespace {

// `nvrtc-cache.exe run` (tools/windows/run_command.cc, shim/windows/loader_redirect.h) reaches the
// loading styles no proxy beside the .exe reaches (tests/clients/windows/loader_client.cc): the real
// DLL by its full path from its own directory, LoadLibraryExW(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS) after
// AddDllDirectory (found through GetProcAddress, as ctypes does), an intermediate DLL that imports
// NVRTC, a child process that compiles, and a program linked with NVRTC's import library (bound by
// the loader before the proxy is injected). Each runs uncached, then through `run` cold and warm in
// separate processes: byte-identical to the uncached run, the cold run a miss per compile, the warm
// one served from the cache (the stats). The proxy finds the real DLL the program loaded itself
// (NVRTC_CACHE_REAL_NVRTC is not set).
class WineLauncher : public Wine, public ::testing::WithParamInterface<std::vector<std::string>> {
 protected:
  std::vector<std::string> client_args(const std::vector<std::string>& style) {
    std::vector<std::string> argv = {windows_path(bin_ + "/loader_client.exe")};
    if (style == std::vector<std::string>{"linked"}) {  // the .exe's own import table (NVRTC found on PATH)
      argv = {windows_path(bin_ + "/nvrtc_client_linked.exe")};
      argv.insert(argv.end(), kScenarios.begin(), kScenarios.end());
      return argv;
    }
    for (const std::string& part : style) {
      if (part == "DLL") {
        argv.push_back(windows_path(nvrtc_dir_ + "/nvrtc64_130_0.dll"));
      } else if (part == "DIR") {
        argv.push_back(windows_path(nvrtc_dir_));
      } else {
        argv.push_back(part);
      }
    }
    argv.insert(argv.end(), kScenarios.begin(), kScenarios.end());
    return argv;
  }

  ProcessResult launched(const std::vector<std::string>& argv, const std::string& launcher) {
    std::vector<std::string> command = {launcher, "run", "--"};
    command.insert(command.end(), argv.begin(), argv.end());
    return run(command, {{"NVRTC_CACHE_DIR", windows_path(cache_.path())}});
  }

  nlohmann::json launcher_stats() {
    const ProcessResult r =
        run({prefix_ + "/bin/nvrtc-cache.exe", "stats", "--json"}, {{"NVRTC_CACHE_DIR", windows_path(cache_.path())}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  const std::vector<std::string> kScenarios = {"trivial", "template", "headers"};
};

TEST_P(WineLauncher, ColdAndWarmIdenticalToUncached) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::vector<std::string> argv = client_args(GetParam());
  const ProcessResult uncached = run(argv);
  ASSERT_EQ(uncached.exit_code, 0) << uncached.err;
  ASSERT_NE(uncached.out.find("### headers\n"), std::string::npos) << uncached.out;
  ASSERT_NE(uncached.out.find("compile rc=0"), std::string::npos) << uncached.out;
  const std::string launcher = prefix_ + "/bin/nvrtc-cache.exe";
  const ProcessResult cold = launched(argv, launcher);
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_TRUE(cold.out == uncached.out) << "cold run differs from the uncached run";
  EXPECT_EQ(cold.err.find("nvrtc-cache"), std::string::npos) << cold.err;
  const nlohmann::json after_cold = launcher_stats();
  const ProcessResult warm = launched(argv, launcher);
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_TRUE(warm.out == uncached.out) << "warm run differs from the uncached run";
  const nlohmann::json after_warm = launcher_stats();
  EXPECT_EQ(after_cold.value("hits", -1), 0) << after_cold.dump();
  EXPECT_GE(after_cold.value("misses", 0), static_cast<int>(kScenarios.size())) << "not reached: " << after_cold.dump();
  EXPECT_EQ(after_warm.value("misses", -1), after_cold.value("misses", -2)) << "warm run missed: " << after_warm.dump();
  EXPECT_EQ(after_warm.value("hits", 0), after_cold.value("misses", -1))
      << "warm run not served: " << after_warm.dump();
}

INSTANTIATE_TEST_SUITE_P(LoadingStyles, WineLauncher,
                         ::testing::Values(std::vector<std::string>{"fullpath", "DLL"},
                                           std::vector<std::string>{"searchdirs", "DIR"},
                                           std::vector<std::string>{"intermediate", "-"},
                                           std::vector<std::string>{"child", "fullpath", "DLL"},
                                           std::vector<std::string>{"linked"}),
                         [](const auto& style) { return style.param[0]; });

// `run` exits as its program did, and fails open: with no DLL to inject (the launcher alone in a
// folder) the program runs uncached, exactly, and this is said once on stderr, never on stdout.
TEST_F(WineLauncher, ExitCodeAndFailOpen) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string launcher = prefix_ + "/bin/nvrtc-cache.exe";
  EXPECT_EQ(launched({"cmd.exe", "/c", "exit 7"}, launcher).exit_code, 7);
  const std::vector<std::string> argv = client_args({"fullpath", "DLL"});
  const ProcessResult uncached = run(argv);
  ASSERT_EQ(uncached.exit_code, 0) << uncached.err;
  const TempDir alone;
  fs::copy_file(launcher, alone.path() + "/nvrtc-cache.exe");
  const ProcessResult r = launched(argv, alone.path() + "/nvrtc-cache.exe");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == uncached.out);
  const std::string said = "it runs uncached";
  const std::size_t at = r.err.find(said);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(said, at + 1), std::string::npos) << "said more than once: " << r.err;
  EXPECT_EQ(r.out.find("nvrtc-cache"), std::string::npos);
  EXPECT_FALSE(fs::exists(cache_.path() + "/store")) << "the program was cached without its DLL";
}

// Two nodes sharing the tier `remote`: node A, cold, compiles for real (and writes the tier before
// each compile returns); node B, with an empty cache of its own, is served from the tier: as many
// hits as A had misses, each a tier hit, no miss (no real compile), and both outputs byte-identical
// to the direct run.
class WineSharedTier : public Wine {
 protected:
  const std::vector<std::string> kScenarios = {"template", "headers", "cubin"};

  EnvVars node_env(const TempDir& cache, const std::string& remote) {
    EnvVars env = cache_env();
    env["NVRTC_CACHE_DIR"] = windows_path(cache.path());
    env["NVRTC_CACHE_REMOTE"] = remote;
    return env;
  }

  nlohmann::json node_stats(const EnvVars& env) {
    ProcessResult r = run({prefix_ + "/bin/nvrtc-cache.exe", "stats", "--json"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  static std::int64_t tier_counter(const nlohmann::json& stats, const std::string& name) {
    return stats["counters"].value("tier.0." + name, std::int64_t{0});
  }

  // Returns node A's stderr.
  std::string expect_served_across_nodes(const std::string& remote, EnvVars extra = {}) {
    const std::string direct = client(direct_client("nvrtc_client_loadlibrary"), kScenarios).out;
    const std::string exe = client_beside_dll("nvrtc_client_loadlibrary");
    const TempDir node_a, node_b;
    EnvVars env_a = node_env(node_a, remote), env_b = node_env(node_b, remote);
    for (auto& [name, value] : extra) env_a[name] = env_b[name] = value;

    const ProcessResult a = client(exe, kScenarios, env_a);
    EXPECT_TRUE(a.out == direct) << "node A differs from the direct run";
    const nlohmann::json stats_a = node_stats(env_a);
    const std::int64_t compiles = stats_a.value("misses", std::int64_t{0});
    if (compiles <= 0) {
      ADD_FAILURE() << "node A compiled nothing for real: " << stats_a.dump();
      return a.err;
    }
    EXPECT_EQ(stats_a.value("hits", 0), 0) << stats_a.dump();
    EXPECT_GE(tier_counter(stats_a, "writes"), compiles) << stats_a.dump();
    EXPECT_EQ(tier_counter(stats_a, "errors"), 0) << a.err;

    const ProcessResult b = client(exe, kScenarios, env_b);
    EXPECT_TRUE(b.out == direct) << "node B differs from the direct run";
    const nlohmann::json stats_b = node_stats(env_b);
    EXPECT_EQ(stats_b.value("misses", -1), 0) << "node B compiled for real: " << stats_b.dump();
    EXPECT_EQ(stats_b.value("hits", 0), compiles) << stats_b.dump();
    EXPECT_GE(tier_counter(stats_b, "hits"), compiles) << "not served by the tier: " << stats_b.dump();
    EXPECT_EQ(b.err.find("shared tier"), std::string::npos) << b.err;
    return a.err;
  }
};

TEST_F(WineSharedTier, RedisServesTheOtherNodeExactly) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  // Signed values, as on Linux: both nodes hold the secret.
  const TempDir secret_dir;
  std::ofstream(secret_dir.path() + "/secret") << "f3a9c1d27e5b8046a1c3e5f7092b4d6e";
  expect_served_across_nodes(redis.url(0),
                             {{"NVRTC_CACHE_REMOTE_SECRET_FILE", windows_path(secret_dir.path() + "/secret")}});
  const store::remote::redis::Reply keys = redis.command({"DBSIZE"});
  EXPECT_GT(keys.integer, 0) << "nothing reached the server";
}

TEST_F(WineSharedTier, FileDirectoryServesTheOtherNodeExactly) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const TempDir shared;
  std::string url = "file:///" + windows_path(shared.path());
  for (char& c : url) c = c == '\\' ? '/' : c;
  // The Windows build has no TLS and no HTTP tier: those URLs are refused, each with one line, and
  // the file:// tier after them is used.
  const std::string log = expect_served_across_nodes("rediss://127.0.0.1:1/0 https://cache.invalid/x " + url);
  EXPECT_NE(log.find("rediss://127.0.0.1:1?db=0: TLS (rediss://) is not available in this build; not used"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("https://cache.invalid/x: HTTP tiers are not available in this build; not used"),
            std::string::npos)
      << log;
  std::size_t entries = 0;
  for (const auto& e : fs::recursive_directory_iterator(shared.path())) entries += e.is_regular_file() ? 1 : 0;
  EXPECT_GT(entries, 0u) << "nothing was written to the directory";
}

// A Redis tier with nothing listening: every result exact, one line about the tier on stderr (never
// stdout), and no more than a moment's delay against the same node without a tier.
TEST_F(WineSharedTier, RedisDownFailsOpenAtOnce) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  std::string url;
  {
    RedisServer redis;
    ASSERT_TRUE(redis.ok());
    url = redis.url(0);
  }  // stopped: its port refuses connections
  const std::string direct = client(direct_client("nvrtc_client_loadlibrary"), kScenarios).out;
  const std::string exe = client_beside_dll("nvrtc_client_loadlibrary");
  const TempDir without_tier, with_tier;
  const auto timed = [&](const EnvVars& env, ProcessResult* r) {
    const auto start = std::chrono::steady_clock::now();
    *r = client(exe, kScenarios, env);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  ProcessResult local, down;
  const double local_s = timed(node_env(without_tier, ""), &local);
  const double down_s = timed(node_env(with_tier, url), &down);
  EXPECT_TRUE(local.out == direct);
  EXPECT_TRUE(down.out == direct) << "a tier that is down changed a result";
  EXPECT_LT(down_s, local_s + 1.0) << "the tier that is down held the compiles up";
  std::size_t lines = 0;
  for (std::size_t at = down.err.find("shared tier"); at != std::string::npos;
       at = down.err.find("shared tier", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << down.err;
  EXPECT_NE(down.err.find("Connection refused"), std::string::npos) << down.err;
  const nlohmann::json stats = node_stats(node_env(with_tier, url));
  EXPECT_GT(stats.value("misses", 0), 0) << stats.dump();
  EXPECT_GE(tier_counter(stats, "errors"), 1) << stats.dump();
  EXPECT_EQ(tier_counter(stats, "hits"), 0) << stats.dump();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Polls (every 20 ms, at most `seconds`) until `done()`.
template <typename Done>
bool within(int seconds, Done done) {
  for (int polls = 0; polls < seconds * 50; ++polls) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// Two processes compiling one cold program at once: a holder that took the claim is held inside its
// compile (its own watcher thread suspends it: first_hit_client's hold: or die:) until a second
// process, started only then, says in its debug log that it waits for that compile; then the holder
// is resumed (hold) or ends without releasing its claim (die: TerminateProcess).
struct Overlap {
  bool holder_held = false;    // the holder had the claim and was inside its compile
  bool waiter_waited = false;  // the waiter was seen waiting for it
  ProcessResult holder, waiter;
  std::string waiter_log, holder_log;
  double go_to_waiter_exit_s = 0;  // from the holder's resumption (or end) to the waiter's exit
};

class WineSingleFlight : public Wine {
 protected:
  Overlap overlap(const std::string& holder_step, const std::string& program) {
    const std::string exe = client_beside_dll("first_hit_client");
    const std::string control = marks_.path() + "/control";
    const std::string log = marks_.path() + "/waiter.log";
    std::ofstream(control).close();
    Overlap o;
    std::atomic<bool> holder_ended{false};  // a holder that ended can no longer hold: stop waiting for it
    std::thread holder([&] {
      EnvVars env = cache_env();
      env["NVRTC_CACHE_LOG"] = "debug";
      env["NVRTC_CACHE_LOG_FILE"] = windows_path(marks_.path() + "/holder.log");
      o.holder = run({exe, "claims:" + windows_path(cache_.path() + "/claims"),
                      holder_step + ":" + windows_path(control), program},
                     env);
      holder_ended = true;
    });
    within(120, [&] { return fs::file_size(control) >= 1 || holder_ended; });
    o.holder_held = fs::file_size(control) >= 1;
    std::thread waiter;
    if (o.holder_held) {
      EnvVars env = cache_env();
      env["NVRTC_CACHE_LOG"] = "debug";
      env["NVRTC_CACHE_LOG_FILE"] = windows_path(log);
      waiter = std::thread([&, env] { o.waiter = run({exe, program}, env); });
      o.waiter_waited =
          within(120, [&] { return file_text(log).find("waiting for another compile of") != std::string::npos; });
    }
    const auto go = std::chrono::steady_clock::now();
    std::ofstream(control, std::ios::app) << (o.holder_held ? "g" : "gg");
    if (waiter.joinable()) waiter.join();
    o.go_to_waiter_exit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - go).count();
    holder.join();
    o.waiter_log = file_text(log);
    o.holder_log = file_text(marks_.path() + "/holder.log");
    return o;
  }

  std::size_t claim_files() const {
    std::size_t n = 0;
    if (fs::exists(cache_.path() + "/claims")) {
      for ([[maybe_unused]] const auto& entry : fs::directory_iterator(cache_.path() + "/claims")) ++n;
    }
    return n;
  }

  TempDir marks_;
};

// Single-flight between processes (shim/flight/single_flight.h; claim files locked with LockFileEx): the
// second process waits for the first one's compile and is served its result: one real compile, both
// results byte-identical to the real NVRTC's, no claim file left.
TEST_F(WineSingleFlight, TwoColdProcessesCompileOnce) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string direct = results_of(client(direct_client("first_hit_client"), {"fill:7"}).out)["fill:7"];
  ASSERT_FALSE(direct.empty());
  const Overlap o = overlap("hold", "fill:7");
  ASSERT_TRUE(o.holder_held) << "the first process never held a claim inside its compile (exit " << o.holder.exit_code
                             << "): " << o.holder.out << o.holder.err << o.holder_log;
  ASSERT_TRUE(o.waiter_waited) << "the second process did not wait for it: " << o.waiter_log << o.waiter.err;
  EXPECT_EQ(o.holder.exit_code, 0) << o.holder.err;
  EXPECT_EQ(o.waiter.exit_code, 0) << o.waiter.err;
  EXPECT_EQ(results_of(o.holder.out)["fill:7"], direct);
  EXPECT_EQ(results_of(o.waiter.out)["fill:7"], direct);
  EXPECT_NE(o.waiter_log.find(": served from the cache"), std::string::npos) << o.waiter_log;
  const nlohmann::json j = stats();
  EXPECT_EQ(j.value("misses", 0), 1) << "not compiled exactly once: " << j.dump();
  EXPECT_EQ(j.value("hits", 0), 1) << j.dump();
  EXPECT_EQ(j.value("waited", 0), 1) << j.dump();
  EXPECT_EQ(claim_files(), 0u) << "the holder's claim file was left behind";
}

// A holder that ends while it holds its claim (TerminateProcess: nothing released) does not keep its
// waiter waiting: the lock goes with the process, and the waiter takes the claim over at once,
// compiles (exactly) and stores, removing the claim file.
TEST_F(WineSingleFlight, KilledHolderIsTakenOver) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string direct = results_of(client(direct_client("first_hit_client"), {"fill:8"}).out)["fill:8"];
  ASSERT_FALSE(direct.empty());
  const Overlap o = overlap("die", "fill:8");
  ASSERT_TRUE(o.holder_held) << "the first process never held a claim inside its compile (exit " << o.holder.exit_code
                             << "): " << o.holder.out << o.holder.err << o.holder_log;
  ASSERT_TRUE(o.waiter_waited) << "the second process did not wait for it: " << o.waiter_log << o.waiter.err;
  EXPECT_EQ(o.holder.exit_code, 9) << "the holder was not ended holding its claim: " << o.holder.out;
  EXPECT_EQ(results_of(o.holder.out).count("fill:8"), 0u) << o.holder.out;
  EXPECT_EQ(o.waiter.exit_code, 0) << o.waiter.err;
  EXPECT_EQ(results_of(o.waiter.out)["fill:8"], direct);
  EXPECT_NE(o.waiter_log.find(": its holder is gone; compiling here"), std::string::npos) << o.waiter_log;
  std::printf("waiter done %.2f s after its holder was ended\n", o.go_to_waiter_exit_s);
  EXPECT_LT(o.go_to_waiter_exit_s, 20.0) << "the waiter was held up by its dead holder";
  const nlohmann::json j = stats();
  EXPECT_EQ(j.value("misses", 0), 1) << j.dump();
  EXPECT_EQ(j.value("waited", 0), 1) << j.dump();
  EXPECT_EQ(claim_files(), 0u) << "the claim file the waiter took over was left behind";
}

// Compile records on Windows (NVRTC_CACHE_RECORD, shim/record_writer.h): a cold and a warm process
// each append one record, read back by the Linux reader (core/compile_record.h) undamaged, naming the
// real DLL and the program's inputs as the client gave them, the same program both times.
TEST_F(Wine, CompileRecordsAreWritten) {
  if (!with_proxy()) GTEST_SKIP() << "no proxy (NVRTC_CACHE_WINDOWS_PREFIX unset)";
  const std::string exe = client_beside_dll("first_hit_client");
  const std::string record = cache_.path() + "/compiles.rec";
  EnvVars env = cache_env();
  env["NVRTC_CACHE_RECORD"] = windows_path(record);
  const std::string cold = client(exe, {}, env).out;
  const std::string warm = client(exe, {}, env).out;
  EXPECT_EQ(results_of(warm)["kernel"], results_of(cold)["kernel"]);
  const nlohmann::json j = stats();
  ASSERT_EQ(j.value("misses", 0), 1) << j.dump();
  ASSERT_EQ(j.value("hits", 0), 1) << j.dump();
  const core::RecordScan scan = core::scan_records(file_text(record));
  EXPECT_TRUE(scan.damage.empty()) << scan.damage.front().what;
  ASSERT_EQ(scan.records.size(), 2u) << "one record per compile, hit or miss";
  for (const core::CompileRecord& r : scan.records) {
    EXPECT_EQ(r.library_path, windows_path(nvrtc_dir_ + "/nvrtc64_130_0.dll")) << "not the real DLL";
    EXPECT_EQ(r.inputs.library.major, 13);
    EXPECT_FALSE(r.inputs.library.build_id.empty());
    EXPECT_EQ(r.inputs.name, std::optional<std::string>("scale.cu"));
    EXPECT_NE(r.inputs.source.find("__global__ void scale(T* data)"), std::string::npos);
    EXPECT_EQ(r.inputs.options, (std::vector<std::string>{"-arch=compute_80", "-std=c++17"}));
    EXPECT_EQ(r.inputs.name_expressions, std::vector<std::string>{"scale<float, 2>"});
  }
  EXPECT_EQ(core::program_identity(scan.records[0]), core::program_identity(scan.records[1]));
}
}  // namespace
}  // namespace nvrtc_cache::testing
