// nvrtc_cache.ProgramCache (python/nvrtc_cache/program_cache.py) with cuda.core from PyPI, each
// scenario of tests/data/python/program_cache.py in fresh Python processes: cuda.core's
// ProgramCacheResource contract; Program.compile("cubin", cache=) cold then warm, byte-identical to
// a compile without a cache; 16 writer processes; eviction under max_size_bytes; threads; a damaged
// store; a Redis tier shared by two nodes (two cache directories, one redis-server of the test's);
// bad settings.
// Needs NVRTC_CACHE_TEST_PYTHON (scripts/python_env.sh): skipped without it, failed under
// NVRTC_CACHE_REQUIRE_PYPI=1.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/harness.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"

namespace nvrtc_cache::testing {
namespace {

const std::string kScript = std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/program_cache.py";
constexpr int kCompiledPrograms = 3;  // SOURCES in the script

class ProgramCache : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* python = std::getenv("NVRTC_CACHE_TEST_PYTHON");
    if (python == nullptr || access(python, X_OK) != 0) {
      NVRTC_CACHE_SKIP_WITHOUT_PYPI(
          "set NVRTC_CACHE_TEST_PYTHON to a Python with cuda-core (scripts/python_env.sh makes one when PyPI is "
          "reachable)");
    }
    python_ = python;
  }

  ProcessResult script(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {python_, kScript};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, {{"NVRTC_CACHE_API_LIBRARY", NVRTC_CACHE_API_PATH},
                              {"PYTHONPATH", std::string(NVRTC_CACHE_SOURCE_DIR) + "/python"},
                              {"PYTHONDONTWRITEBYTECODE", "1"}});
  }

  // The scenario's output; fails the test unless it exited 0.
  std::string run_ok(const std::vector<std::string>& args) {
    const ProcessResult r = script(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << ":\n" << r.out << r.err;
    return r.out;
  }

  // The compiled cubins of one "compile" or "plain" run, by program.
  static std::vector<std::string> cubins(const std::string& prefix) {
    std::vector<std::string> out;
    for (int n = 0; n < kCompiledPrograms; ++n) out.push_back(read_file(prefix + "." + std::to_string(n)));
    return out;
  }

  void expect_identical(const std::vector<std::string>& reference, const std::string& prefix) {
    const std::vector<std::string> got = cubins(prefix);
    for (int n = 0; n < kCompiledPrograms; ++n) {
      EXPECT_FALSE(got[n].empty()) << prefix << "." << n;
      EXPECT_TRUE(got[n] == reference[n]) << prefix << "." << n << " differs from the uncached compile";
    }
  }

  std::string python_;
  TempDir dir_, out_;
};

TEST_F(ProgramCache, Contract) { EXPECT_EQ(run_ok({"contract", dir_.path()}), "ok\n"); }
TEST_F(ProgramCache, EvictionUnderMaxSizeBytes) { EXPECT_EQ(run_ok({"eviction", dir_.path()}), "ok\n"); }
TEST_F(ProgramCache, SixteenProcessesOnOneKeyAndManyKeys) { EXPECT_EQ(run_ok({"writers", dir_.path()}), "ok\n"); }
TEST_F(ProgramCache, Threads) { EXPECT_EQ(run_ok({"threads", dir_.path()}), "ok\n"); }
// An unknown or shim-only setting, a bad value, a malformed tier URL or secret file: a ValueError
// (InvalidArgumentError) at open naming it; an unreachable tier: opened, served from the local store.
TEST_F(ProgramCache, BadSettingsAreRefusedAtOpenAndUnreachableTiersFailOpen) {
  EXPECT_EQ(run_ok({"settings", dir_.path()}), "ok\n");
}

TEST_F(ProgramCache, CompileColdThenWarmInAnotherProcessIsByteIdentical) {
  run_ok({"plain", out_.path() + "/plain"});
  const std::vector<std::string> reference = cubins(out_.path() + "/plain");
  EXPECT_EQ(run_ok({"compile", dir_.path(), out_.path() + "/cold"}), "hits 0 misses 3 rejected 0\n");
  EXPECT_EQ(run_ok({"compile", dir_.path(), out_.path() + "/warm"}), "hits 3 misses 0 rejected 0\n");
  expect_identical(reference, out_.path() + "/cold");
  expect_identical(reference, out_.path() + "/warm");
  // `nvrtc-cache stats` counts ProgramCache's traffic with the cache's own.
  const ProcessResult stats =
      run_process({NVRTC_CACHE_CLI_PATH, "stats", "--json"}, {{"NVRTC_CACHE_DIR", dir_.path()}});
  EXPECT_NE(stats.out.find("\"api_hits\": 3"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("\"api_misses\": 3"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("\"api_stores\": 3"), std::string::npos) << stats.out;
}

// Bytes flipped all over the store's data file after a cold run: the next compiles are still exact
// (served from what survived, compiled afresh for the rest), and the run after them is all hits.
TEST_F(ProgramCache, ADamagedStoreStillCompilesExactly) {
  run_ok({"plain", out_.path() + "/plain"});
  const std::vector<std::string> reference = cubins(out_.path() + "/plain");
  run_ok({"compile", dir_.path(), out_.path() + "/cold"});
  const std::string data = dir_.path() + "/store/data.mdb";
  struct stat st {};
  ASSERT_EQ(stat(data.c_str(), &st), 0);
  std::mt19937 random(1785);
  {
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    for (int i = 0; i < 2000; ++i) {
      f.seekp(static_cast<std::streamoff>(8192 + random() % static_cast<unsigned>(st.st_size - 8192)));
      f.put(static_cast<char>(random()));
    }
  }
  run_ok({"compile", dir_.path(), out_.path() + "/damaged"});
  expect_identical(reference, out_.path() + "/damaged");
  EXPECT_EQ(run_ok({"compile", dir_.path(), out_.path() + "/healed"}), "hits 3 misses 0 rejected 0\n");
  expect_identical(reference, out_.path() + "/healed");
}

// Two nodes (two cache directories) behind one Redis tier: what node A compiled, node B is served
// from the tier in its first process, byte-identical; B's store then holds it (the next run is local).
TEST_F(ProgramCache, ARedisTierSharedByTwoNodes) {
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  const std::string settings = "remote = " + redis.url() + "\n";
  TempDir node_b;
  run_ok({"plain", out_.path() + "/plain"});
  const std::vector<std::string> reference = cubins(out_.path() + "/plain");
  EXPECT_EQ(run_ok({"compile", dir_.path(), out_.path() + "/a", settings}), "hits 0 misses 3 rejected 0\n");
  EXPECT_EQ(run_ok({"compile", node_b.path(), out_.path() + "/b", settings}), "hits 3 misses 0 rejected 0\n");
  expect_identical(reference, out_.path() + "/b");
  redis.stop();  // node B's own store answers now
  EXPECT_EQ(run_ok({"compile", node_b.path(), out_.path() + "/b2", settings}), "hits 3 misses 0 rejected 0\n");
  expect_identical(reference, out_.path() + "/b2");
}

}  // namespace
}  // namespace nvrtc_cache::testing
