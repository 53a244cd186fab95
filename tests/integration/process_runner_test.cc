// The process runner itself: a child that outlives its deadline is killed (with its descendants)
// and fails the test instead of hanging the suite.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

#include "tests/support/process.h"

namespace nvrtc_cache::testing {
namespace {

TEST(ProcessRunner, KillsAChildPastItsDeadlineAndFailsTheTest) {
  ProcessResult result;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NONFATAL_FAILURE(result = run_process({"/bin/sh", "-c", "sleep 60 & sleep 60"}, {}, "", 1),
                          "still running after 1 s");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, -SIGKILL);
  EXPECT_LT(elapsed, std::chrono::seconds(30));  // the background grandchild held the pipes too
}

TEST(ProcessRunner, ReportsOutputAndExitCodeOfAChildThatFinishes) {
  const ProcessResult result = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.out, "out\n");
  EXPECT_EQ(result.err, "err\n");
}

}  // namespace
}  // namespace nvrtc_cache::testing
