// Fork safety: tests/clients/fork_storm.cc forks hundreds of children while other threads are inside the
// shim (compiling cached programs nonstop, or compiling new programs for real); every child must
// finish, with the bytes NVRTC itself returns. FORK_STORM_CHILDREN raises the number of forks
// (e.g. 5000 for a long run).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

std::map<std::string, long long> figures_of(const std::string& out) {
  std::map<std::string, long long> figures;
  std::istringstream in(out);
  std::string name;
  long long value = 0;
  while (in >> name >> value) figures[name] = value;
  return figures;
}

int children_wanted(int fallback) {
  const char* value = std::getenv("FORK_STORM_CHILDREN");
  return value && *value ? std::atoi(value) : fallback;
}

struct Storm {
  std::map<std::string, long long> figures;
  store::Counters before, after;
  std::int64_t delta(const std::string& name) const { return get(after, name) - get(before, name); }
};

// Writes NVRTC's own results, stores them through the shim, then runs the storm under the shim.
Storm run_storm(const TempDir& dir, const std::string& mode, int children) {
  const std::string expected = dir.path() + "/expected";
  const std::string warm = dir.path() + "/warm";
  Storm storm;
  const ProcessResult direct = run_process({FORK_STORM_PATH, "expected", expected});
  EXPECT_EQ(direct.exit_code, 0) << direct.err;
  const EnvVars env = shim_env(dir.path() + "/cache");
  const ProcessResult stored = run_process({FORK_STORM_PATH, "expected", warm}, env);
  EXPECT_EQ(stored.exit_code, 0) << stored.err;
  std::ifstream a(expected), b(warm);
  std::stringstream expected_text, warm_text;
  expected_text << a.rdbuf();
  warm_text << b.rdbuf();
  EXPECT_FALSE(expected_text.str().empty());
  EXPECT_TRUE(expected_text.str() == warm_text.str()) << "the shim's first run differs from NVRTC";

  storm.before = counters_of(dir.path() + "/cache");
  EXPECT_GT(get(storm.before, "stores"), 0);
  EnvVars storm_env = env;
  storm_env["FORK_STORM_CHILDREN"] = std::to_string(children);
  const ProcessResult run = run_process({FORK_STORM_PATH, mode, expected}, storm_env);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  storm.figures = figures_of(run.out);
  storm.after = counters_of(dir.path() + "/cache");
  return storm;
}

// Three threads compile cached programs nonstop while the main thread forks: a child must never
// inherit one of the shim's locks (or a half-done initialisation) held by a thread that is not
// copied into it.
TEST(ForkSafety, ChildrenForkedWhileThreadsAreServedFromTheCacheNeverHang) {
  TempDir dir;
  const int children = children_wanted(500);
  const Storm storm = run_storm(dir, "hits", children);
  const auto& f = storm.figures;
  ASSERT_EQ(f.at("children"), children);
  EXPECT_EQ(f.at("hung"), 0);
  EXPECT_EQ(f.at("unclean"), 0);
  EXPECT_EQ(f.at("differing"), 0) << "a child's result differs from NVRTC's";
  // Preconditions: the forks really happened while other threads were inside the shim, and every
  // compile of the storm (threads and children) was served from the cache: the real NVRTC never
  // compiled (asked of NVRTC itself, and the cache's counters).
  EXPECT_GE(f.at("forks_with_thread_inside"), children / 2);
  EXPECT_EQ(f.at("children_from_cache"), children);
  EXPECT_GT(f.at("thread_compiles"), children);
  EXPECT_EQ(f.at("thread_real_compiles"), 0);
  EXPECT_EQ(f.at("thread_differing"), 0);
  EXPECT_EQ(storm.delta("misses"), 0);
  EXPECT_EQ(storm.delta("uncacheable"), 0);
  EXPECT_EQ(storm.delta("stores"), 0);
  EXPECT_GT(storm.delta("hits"), 0);
}

// A thread compiles new programs for real (NVRTC holds its own compile lock meanwhile) while the
// main thread forks: a child served from the cache must not need that lock. (A child that itself
// compiles for real may hang in NVRTC; that is NVRTC's own limit.)
TEST(ForkSafety, ChildrenServedFromTheCacheDoNotWaitForARealCompileOfTheParent) {
  TempDir dir;
  const int children = children_wanted(500) / 5;  // real compiles are slow: a fifth as many
  const Storm storm = run_storm(dir, "misses", children);
  const auto& f = storm.figures;
  ASSERT_EQ(f.at("children"), children);
  EXPECT_EQ(f.at("hung"), 0);
  EXPECT_EQ(f.at("unclean"), 0);
  EXPECT_EQ(f.at("differing"), 0) << "a child's result differs from NVRTC's";
  EXPECT_GE(f.at("forks_during_compile"), children * 3 / 4);
  EXPECT_EQ(f.at("children_from_cache"), children);
  EXPECT_GT(f.at("thread_real_compiles"), 0);
  EXPECT_GT(storm.delta("misses"), 0);
}

}  // namespace
}  // namespace nvrtc_cache
