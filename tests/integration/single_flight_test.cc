// Single-flight (shim/flight/single_flight.h) with the real NVRTC in real processes: many cold compiles
// of one program on one node do one real compile; a holder killed mid-compile is taken over; a
// stuck holder costs a waiter no more than NVRTC_CACHE_WAIT_TIMEOUT; no claim file is left behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::size_t entries_in(const std::string& dir) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); ++it) ++n;
  return n;
}

// Waits (at most two minutes) until `condition` holds.
bool eventually(const std::function<bool()>& condition) {
  const auto deadline = Clock::now() + std::chrono::minutes(2);
  while (!condition()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Runs `count` probes at once, each with `env` and its index in PROBE_INDEX.
std::vector<ProcessResult> probes_together(int count, const std::vector<std::string>& scenarios,
                                           const std::function<EnvVars(int)>& env_of) {
  std::vector<ProcessResult> results(static_cast<std::size_t>(count));
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&, i] { results[static_cast<std::size_t>(i)] = probe(scenarios, env_of(i)); });
  }
  for (auto& t : threads) t.join();
  return results;
}

// Whether someone holds an exclusive lock on `path` (the test's own locks aside).
bool locked(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock query {};
  query.l_type = F_WRLCK;
  query.l_whence = SEEK_SET;
  const bool held = fcntl(fd, F_OFD_GETLK, &query) == 0 && query.l_type != F_UNLCK;
  close(fd);
  return held;
}

// The one claim file in `claims`, or "" if there is not exactly one.
std::string only_claim_file(const std::string& claims) {
  std::error_code ec;
  std::vector<std::string> files;
  for (auto it = fs::directory_iterator(claims, ec); !ec && it != fs::directory_iterator(); ++it) {
    files.push_back(it->path().string());
  }
  return files.size() == 1 ? files[0] : "";
}

class SingleFlight : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { direct_ = new ProcessResult(probe({"cub"}, {})); }
  static void TearDownTestSuite() {
    delete direct_;
    direct_ = nullptr;
  }
  void SetUp() override {
    ASSERT_EQ(direct_->exit_code, 0) << direct_->err;
    ASSERT_NE(direct_->out.find("compile rc=0"), std::string::npos) << direct_->out.substr(0, 2000);
  }
  static ProcessResult* direct_;
};
ProcessResult* SingleFlight::direct_ = nullptr;

TEST_F(SingleFlight, SixteenColdProcessesOnOneProgramCompileItOnce) {
  TempDir dir;
  const auto results = probes_together(16, {"cub"}, [&](int) { return shim_env(dir.path()); });
  for (const ProcessResult& r : results) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct_->out) << "a process's result differs from NVRTC's";
    EXPECT_EQ(r.err, "");
  }
  const auto c = counters_of(dir.path());
  EXPECT_EQ(get(c, "misses"), 1) << "more than one real compile";
  EXPECT_EQ(get(c, "stores"), 1);
  EXPECT_EQ(get(c, "hits"), 15);
  EXPECT_GE(get(c, "waited"), 1) << "no process overlapped the compile: the test proved nothing";
  EXPECT_GT(get(c, "wait_ns"), 0);
  EXPECT_EQ(get(c, "errors"), 0);
  EXPECT_EQ(get(c, "uncacheable"), 0);
  EXPECT_EQ(entries_in(dir.path() + "/claims"), 0u) << "claim files left behind";
}

TEST_F(SingleFlight, SixteenThreadsOfOneProcessCompileItOnce) {
  TempDir dir;
  // What NVRTC prints for it: each thread's dump is the single-threaded scenario's (the direct
  // 16-thread run is not repeated here: NVRTC serializes it, 16 compiles long).
  const std::string one_dump = direct_->out.substr(direct_->out.find('\n') + 1);
  std::string expected = "### cub_threads\n";
  for (int t = 0; t < 16; ++t) expected += "== thread " + std::to_string(t) + "\n" + one_dump;
  const ProcessResult shimmed = probe({"cub_threads"}, shim_env(dir.path()));
  EXPECT_EQ(shimmed.exit_code, 0) << shimmed.err;
  EXPECT_TRUE(shimmed.out == expected) << "a thread's result differs from NVRTC's";
  EXPECT_EQ(shimmed.err, "");
  const auto c = counters_of(dir.path());
  EXPECT_EQ(get(c, "misses"), 1) << "more than one real compile";
  EXPECT_EQ(get(c, "stores"), 1);
  EXPECT_EQ(get(c, "hits"), 15);
  EXPECT_GE(get(c, "waited"), 1);
  EXPECT_EQ(entries_in(dir.path() + "/claims"), 0u);
}

// The environment of one process of a claim test in `dir`: the shim, its debug log and its pid file,
// named after `who`.
EnvVars claim_test_env(const TempDir& dir, const std::string& who) {
  EnvVars env = shim_env(dir.path());
  env["NVRTC_CACHE_LOG"] = "debug";
  env["NVRTC_CACHE_LOG_FILE"] = dir.path() + "/" + who + ".log";
  env["PROBE_PID_FILE"] = dir.path() + "/" + who + ".pid";
  return env;
}

// Waits until the holder started in `dir` (pid file "holder.pid") holds its claim and has marked it,
// then stops it (SIGSTOP) mid-compile; sets `claim_file` and `holder_pid`.
void stop_holder_once_claimed(const TempDir& dir, std::string& claim_file, pid_t& holder_pid) {
  ASSERT_TRUE(eventually([&] {
    return !(claim_file = only_claim_file(dir.path() + "/claims")).empty() && locked(claim_file);
  })) << "the holder never claimed";
  holder_pid = std::stoi(read_file(dir.path() + "/holder.pid"));
  ASSERT_GT(holder_pid, 1);
  // The holder locks its claim, then writes its pid into it: stopped between the two, it would never
  // mark it (and a waiter could not tell who holds it).
  const std::string mark = std::to_string(holder_pid) + " ";
  ASSERT_TRUE(eventually([&] { return read_file(claim_file).starts_with(mark); })) << "the holder did not mark its claim";
  ASSERT_EQ(kill(holder_pid, SIGSTOP), 0);
}

// On every way out of a test: the process `pid` killed (if still set), every thread joined.
struct KillAndJoin {
  pid_t& pid;
  std::vector<std::thread>& threads;
  ~KillAndJoin() {
    if (pid > 1) kill(pid, SIGKILL);
    for (auto& t : threads) t.join();
  }
};

TEST_F(SingleFlight, AWaiterTakesOverFromAHolderKilledMidCompile) {
  TempDir dir;
  const std::string claims = dir.path() + "/claims";
  auto env_for = [&](const std::string& who) { return claim_test_env(dir, who); };
  constexpr int kWaiters = 3;
  ProcessResult holder;
  std::vector<ProcessResult> waiters(kWaiters);
  std::vector<std::thread> threads;  // the holder's, then the waiters'
  pid_t holder_pid = 0;
  const KillAndJoin cleanup{holder_pid, threads};
  threads.emplace_back([&] { holder = probe({"cub"}, env_for("holder")); });
  // Stopped while it holds the claim, so that it is still mid-compile when killed however slow
  // the waiters are to start.
  std::string claim_file;
  stop_holder_once_claimed(dir, claim_file, holder_pid);
  ASSERT_FALSE(HasFatalFailure());

  for (int i = 0; i < kWaiters; ++i) {
    threads.emplace_back([&, i] { waiters[i] = probe({"cub"}, env_for("waiter" + std::to_string(i))); });
  }
  for (int i = 0; i < kWaiters; ++i) {
    const std::string log = dir.path() + "/waiter" + std::to_string(i) + ".log";
    EXPECT_TRUE(eventually([&] { return read_file(log).find("waiting for another compile") != std::string::npos; }))
        << "waiter " << i << " never waited";
  }
  ASSERT_TRUE(locked(claim_file)) << "the holder no longer holds its claim";
  ASSERT_EQ(kill(std::exchange(holder_pid, 0), SIGKILL), 0);
  for (auto& t : threads) t.join();
  threads.clear();

  EXPECT_EQ(holder.exit_code, -SIGKILL);
  int took_over = 0, served = 0;
  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_EQ(waiters[i].exit_code, 0) << waiters[i].err;
    EXPECT_TRUE(waiters[i].out == direct_->out) << "waiter " << i << " differs from NVRTC";
    const std::string log = read_file(dir.path() + "/waiter" + std::to_string(i) + ".log");
    if (log.find("its holder is gone; compiling here") != std::string::npos) ++took_over;
    if (log.find(": served from the cache") != std::string::npos) ++served;
  }
  EXPECT_EQ(took_over, 1);
  EXPECT_EQ(served, kWaiters - 1);
  const auto c = counters_of(dir.path());
  EXPECT_EQ(get(c, "misses"), 1);
  EXPECT_EQ(get(c, "stores"), 1);
  EXPECT_EQ(get(c, "hits"), kWaiters - 1);
  EXPECT_EQ(get(c, "waited"), kWaiters);
  EXPECT_EQ(entries_in(claims), 0u) << "the dead holder's claim file was not cleaned up";
}

// A holder stopped mid-compile (SIGSTOP: a suspended job) is not waited for until the wait timeout:
// after a short grace (10 s) its waiter compiles the program itself, exactly; the holder, continued
// later, is none the worse.
TEST_F(SingleFlight, AWaiterStopsWaitingForAStoppedHolder) {
  TempDir dir;
  auto env_for = [&](const std::string& who) {
    EnvVars env = claim_test_env(dir, who);
    env["NVRTC_CACHE_WAIT_TIMEOUT"] = "120";
    return env;
  };
  ProcessResult holder, waiter;
  std::vector<std::thread> threads;
  pid_t holder_pid = 0;
  const KillAndJoin cleanup{holder_pid, threads};
  threads.emplace_back([&] { holder = probe({"cub"}, env_for("holder")); });
  std::string claim_file;
  stop_holder_once_claimed(dir, claim_file, holder_pid);
  ASSERT_FALSE(HasFatalFailure());

  const auto started = std::chrono::steady_clock::now();
  threads.emplace_back([&] { waiter = probe({"cub"}, env_for("waiter")); });
  threads.back().join();
  threads.pop_back();
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(waiter.exit_code, 0) << waiter.err;
  EXPECT_TRUE(waiter.out == direct_->out) << "the waiter differs from NVRTC";
  EXPECT_LT(took, std::chrono::seconds(60)) << "the waiter waited the stopped holder out";
  const std::string log = read_file(dir.path() + "/waiter.log");
  EXPECT_NE(log.find("its holder is stopped; compiling here"), std::string::npos) << log;
  EXPECT_TRUE(locked(claim_file)) << "the stopped holder lost its claim";

  ASSERT_EQ(kill(holder_pid, SIGCONT), 0);  // continued, it finishes exactly
  holder_pid = 0;
  for (auto& t : threads) t.join();
  threads.clear();
  EXPECT_EQ(holder.exit_code, 0) << holder.err;
  EXPECT_TRUE(holder.out == direct_->out);
}

TEST_F(SingleFlight, AWaitThatTimesOutCompilesItselfExactly) {
  // The key's name, from a first run's debug log.
  TempDir first;
  EnvVars env = shim_env(first.path());
  env["NVRTC_CACHE_LOG"] = "debug";
  env["NVRTC_CACHE_LOG_FILE"] = first.path() + "/log";
  ASSERT_EQ(probe({"cub"}, env).exit_code, 0);
  std::smatch miss;
  const std::string first_log = read_file(first.path() + "/log");
  ASSERT_TRUE(std::regex_search(first_log, miss, std::regex("miss program .* \\(key ([0-9a-f]{64})\\)"))) << first_log;

  // A claim held by this test, which never releases it.
  TempDir dir;
  const std::string claims = dir.path() + "/claims";
  ASSERT_EQ(mkdir(claims.c_str(), 0700), 0);
  const std::string claim_file = claims + "/" + miss[1].str();
  const int stuck = open(claim_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(stuck, 0);
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  ASSERT_EQ(fcntl(stuck, F_OFD_SETLK, &lock), 0);

  env = shim_env(dir.path());
  env["NVRTC_CACHE_WAIT_TIMEOUT"] = "1";
  env["NVRTC_CACHE_LOG"] = "debug";
  env["NVRTC_CACHE_LOG_FILE"] = dir.path() + "/log";
  const ProcessResult r = probe({"cub"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == direct_->out) << "the result differs from NVRTC's";
  EXPECT_NE(read_file(dir.path() + "/log").find("timed out (NVRTC_CACHE_WAIT_TIMEOUT); compiling here"),
            std::string::npos)
      << read_file(dir.path() + "/log");
  const auto c = counters_of(dir.path());
  EXPECT_EQ(get(c, "waited"), 1);
  EXPECT_GE(get(c, "wait_ns"), 1'000'000'000);
  EXPECT_EQ(get(c, "misses"), 1);
  EXPECT_EQ(get(c, "stores"), 1);

  unlink(claim_file.c_str());
  close(stuck);
  EXPECT_EQ(entries_in(claims), 0u);
}

TEST_F(SingleFlight, UnusableClaimsDirectoryFailsOpenSilently) {
  TempDir dir;
  std::ofstream(dir.path() + "/claims") << "not a directory";
  const auto results = probes_together(2, {"cub"}, [&](int) { return shim_env(dir.path()); });
  for (const ProcessResult& r : results) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct_->out);
    EXPECT_EQ(r.err, "") << "said something at the default log level";
  }
  const auto c = counters_of(dir.path());
  EXPECT_EQ(get(c, "hits") + get(c, "misses"), 2);
  EXPECT_EQ(get(c, "waited"), 0);
  EXPECT_EQ(get(c, "errors"), 0);
}

}  // namespace
}  // namespace nvrtc_cache
