// The Windows proxy's store under Wine (tests/clients/windows/first_hit_client.cc): the data file
// growing with use while another process holds the store open, a store opened ahead surviving an
// early exit and an unload, and the first hit of a fresh process, exact and timed.
#include "tests/integration/wine_fixture.h"

namespace nvrtc_cache::testing {
namespace {

constexpr std::uintmax_t kMiB = std::uintmax_t{1} << 20;

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
// and recorded as test properties): at least 20 times faster (a ratio: an absolute bar would measure
// the machine, which the benchmarks do, not the cache); the hits are counted
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
  // The bar: at least 20 times faster than the real compile. This test runs alone
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
    met = hit_ns * (bar ? 20 : 4) <= real_ns;
  }
  EXPECT_TRUE(met) << shown << (bar ? " (the bar: 20x)" : " (at least 4x)");
  const nlohmann::json after = stats();
  // Every timed process was served by a hit: none compiled.
  EXPECT_EQ(after.value("hits", 0), before.value("hits", 0) + hits) << after.dump();
  EXPECT_EQ(after.value("misses", 0), before.value("misses", 0)) << after.dump();
}

}  // namespace
}  // namespace nvrtc_cache::testing
