// The Windows NVRTC under Wine: the mingw-built clients (tests/clients/windows/nvrtc_client.cc, reached by
// LoadLibraryA and through an import library) run the portable corpus (tests/support/probe_corpus.h) directly
// against the real nvrtc64_130_0.dll, then with an nvrtc64_130_0.dll placed beside the .exe (first in
// the DLL search order) cold and warm: every getter byte-identical to the direct run, the warm run
// served from the cache, and an edit of a header on disk noticed. The DLL beside the .exe is the
// proxy from NVRTC_CACHE_WINDOWS_PREFIX/bin (scripts/windows-build.sh PREFIX), which finds the real
// DLL through NVRTC_CACHE_REAL_NVRTC and keeps its cache in NVRTC_CACHE_DIR; its counters are read
// with PREFIX/bin/nvrtc-cache.exe stats --json. Without a PREFIX the real DLL itself is placed beside
// the .exe (the placement and comparison are exercised) and the tests skip, saying so, before the
// cache assertions. Also: the import watch under Wine (tests/clients/windows/import_watch_check.cc).
// The fixture is tests/integration/wine_fixture.h; the proxy's store (wine_store_test.cc), `run`
// (wine_launcher_test.cc), shared tiers, single-flight and compile records (wine_tier_test.cc) and the
// CLI (wine_cli_test.cc) have their own files.
// Preconditions, from scripts/windows-nvrtc.sh DIR: NVRTC_CACHE_WINE_NVRTC_DIR (the Windows NVRTC and
// DIR/wineprefix), NVRTC_CACHE_WINE (the loader); without them the tests skip (fail where
// NVRTC_CACHE_REQUIRE_PYPI=1).
#include "tests/integration/wine_fixture.h"

namespace nvrtc_cache::testing {
namespace {

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
