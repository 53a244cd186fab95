// A process stopped inside a write transaction of the cache (SIGSTOP: Ctrl-Z, a debugger) holds
// LMDB's one writer lock. Another process's compiles and its exit then wait at most the write bound
// (store/bounded_writes.h), with results byte for byte NVRTC's; its hits need no lock at all. Once the
// holder is gone (killed: LMDB's lock is robust), writes go through again.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "tests/support/harness.h"

extern char** environ;

namespace nvrtc_cache {
namespace {

using namespace testing;

// The holder, started and stopped inside its write transaction; killed at destruction.
class StoppedWriter {
 public:
  explicit StoppedWriter(const std::string& store_dir) {
    int out[2];
    if (pipe(out) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    char* argv[] = {const_cast<char*>(WRITE_LOCK_HOLDER_PATH), const_cast<char*>(store_dir.c_str()), nullptr};
    if (posix_spawn(&pid_, WRITE_LOCK_HOLDER_PATH, &actions, nullptr, argv, environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    char said[5] = {};
    held_ = pid_ > 0 && read(out[0], said, 4) == 4 && std::string(said) == "held";
    close(out[0]);
    int status = 0;
    stopped_ = held_ && waitpid(pid_, &status, WUNTRACED) == pid_ && WIFSTOPPED(status);
  }
  ~StoppedWriter() { kill_now(); }
  void kill_now() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  bool holds_the_lock_stopped() const { return held_ && stopped_; }

 private:
  pid_t pid_ = -1;
  bool held_ = false;
  bool stopped_ = false;
};

TEST(BoundedWrites, AStoppedWriterDelaysCompilesAndExitByTheBoundOnly) {
  TempDir cache;
  const ProcessResult direct = probe({"trivial", "template", "cubin"}, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  const ProcessResult filled = probe({"trivial"}, shim_env(cache.path()));  // creates the store
  ASSERT_EQ(filled.exit_code, 0) << filled.err;
  ASSERT_EQ(get(counters_of(cache.path()), "stores"), 1);

  StoppedWriter holder(cache.path() + "/store");
  ASSERT_TRUE(holder.holds_the_lock_stopped());
  const auto started = std::chrono::steady_clock::now();
  const ProcessResult blocked = run_process(
      {NVRTC_PROBE_PATH, "trivial", "template", "cubin"},
      [&] {
        EnvVars env = shim_env(cache.path());
        env["PROBE_INCLUDE_DIR"] = kIncludeDir;
        return env;
      }(),
      "", 60);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_FALSE(blocked.timed_out) << "a compile or the exit waited on the stopped writer";
  EXPECT_EQ(blocked.exit_code, 0) << blocked.err;
  EXPECT_TRUE(blocked.out == direct.out) << "results differ from NVRTC's";
  // Two misses (each stores a result and a manifest) and the exit merge: one bound, then no waiting.
  EXPECT_LT(took, std::chrono::seconds(8));
  EXPECT_NE(blocked.err.find("write lock"), std::string::npos) << blocked.err;

  holder.kill_now();  // LMDB's writer lock is robust: the next writer recovers it
  const ProcessResult after = probe({"trivial", "template", "cubin"}, shim_env(cache.path()));
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_TRUE(after.out == direct.out);
  EXPECT_GE(get(counters_of(cache.path()), "stores"), 3) << "writes did not go through once the holder died";
}

}  // namespace
}  // namespace nvrtc_cache
