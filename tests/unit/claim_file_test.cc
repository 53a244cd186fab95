// Claim files (shim/flight/claim_file.h) in one process: threads contend like processes do (each attempt
// is its own open file description). Holders that die are simulated by a lock taken and dropped on
// the claim file directly, which is what the kernel does at a holder's death; tests/integration/single_flight_test.cc
// kills real processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "shim/flight/claim_file.h"

namespace nvrtc_cache::shim {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class ClaimFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("claim-file-test-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    dir_ = (root_ / "claims").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  std::size_t files_in_claims() const {
    std::size_t n = 0;
    for (auto it = fs::directory_iterator(dir_); it != fs::directory_iterator(); ++it) ++n;
    return n;
  }

  // An exclusive OFD lock on the claim file, taken as a claimant would (the file is created).
  int lock_directly(const std::string& name) {
    const int fd = open((dir_ + "/" + name).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    EXPECT_GE(fd, 0);
    EXPECT_EQ(fcntl(fd, F_OFD_SETLK, &lock), 0);
    return fd;
  }

  fs::path root_;
  std::string dir_;
};

const auto kNever = [] { return false; };

TEST_F(ClaimFileTest, AFreeKeyIsClaimedAndItsFileRemovedAtRelease) {
  ClaimDirectory claims(dir_, false);
  ASSERT_TRUE(claims.usable()) << claims.problem();
  struct stat st;
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ClaimAttempt attempt = claims.claim_or_wait("k", 10s, kNever);
  EXPECT_EQ(attempt.outcome, ClaimOutcome::kClaimed);
  EXPECT_TRUE(attempt.claim.held());
  EXPECT_FALSE(attempt.waited);
  ASSERT_EQ(stat((dir_ + "/k").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  errno = 4242;
  attempt.claim.release();
  EXPECT_EQ(errno, 4242);
  EXPECT_FALSE(attempt.claim.held());
  EXPECT_EQ(files_in_claims(), 0u);
}

TEST_F(ClaimFileTest, AResultStoredBeforeTheClaimIsServedWithoutCompiling) {
  ClaimDirectory claims(dir_, false);
  ClaimAttempt attempt = claims.claim_or_wait("k", 10s, [] { return true; });
  EXPECT_EQ(attempt.outcome, ClaimOutcome::kReady);
  EXPECT_FALSE(attempt.claim.held());
  EXPECT_EQ(files_in_claims(), 0u);
}

TEST_F(ClaimFileTest, SixteenThreadsOnOneKeyCompileOnceAndTheRestAreServed) {
  ClaimDirectory claims(dir_, false);
  std::atomic<bool> stored{false};
  std::atomic<int> compiles{0}, served{0}, waited{0}, started{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      started.fetch_add(1);
      while (started.load() < 16) std::this_thread::yield();
      ClaimAttempt attempt = claims.claim_or_wait("k", 30s, [&] { return stored.load(); });
      if (attempt.waited) waited.fetch_add(1);
      if (attempt.outcome == ClaimOutcome::kClaimed) {
        compiles.fetch_add(1);
        std::this_thread::sleep_for(200ms);  // the compile
        stored = true;                       // the store, before the release
      } else if (attempt.outcome == ClaimOutcome::kReady) {
        served.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(compiles.load(), 1);
  EXPECT_EQ(served.load(), 15);
  EXPECT_GE(waited.load(), 1);
  EXPECT_EQ(files_in_claims(), 0u);
}

TEST_F(ClaimFileTest, AWaiterIsServedAsSoonAsTheResultIsStoredAndWaitingIsCounted) {
  ClaimDirectory claims(dir_, false);
  ClaimAttempt holder = claims.claim_or_wait("k", 10s, kNever);
  ASSERT_EQ(holder.outcome, ClaimOutcome::kClaimed);
  std::atomic<bool> stored{false};
  std::atomic<int> on_wait_calls{0};
  std::thread waiter_thread;
  ClaimAttempt waiter;
  waiter_thread = std::thread([&] {
    waiter = claims.claim_or_wait(
        "k", 30s, [&] { return stored.load(); }, [&] { on_wait_calls.fetch_add(1); });
  });
  while (on_wait_calls.load() == 0) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(100ms);
  stored = true;  // stored, claim still held: the waiter need not wait for the release
  waiter_thread.join();
  EXPECT_EQ(waiter.outcome, ClaimOutcome::kReady);
  EXPECT_TRUE(waiter.waited);
  EXPECT_EQ(on_wait_calls.load(), 1);
  EXPECT_GE(waiter.wait_ns, 100'000'000);
  EXPECT_TRUE(holder.claim.held());
  holder.claim.release();
  EXPECT_EQ(files_in_claims(), 0u);
}

TEST_F(ClaimFileTest, WaitersOfAHolderThatStoredNothingCompileThemselvesInParallel) {
  ClaimDirectory claims(dir_, false);
  ClaimAttempt holder = claims.claim_or_wait("k", 10s, kNever);
  ASSERT_EQ(holder.outcome, ClaimOutcome::kClaimed);
  std::vector<ClaimAttempt> waiters(4);
  std::vector<std::thread> threads;
  for (auto& w : waiters) threads.emplace_back([&] { w = claims.claim_or_wait("k", 30s, kNever); });
  std::this_thread::sleep_for(100ms);
  holder.claim.release();  // e.g. the compile turned out uncacheable
  for (auto& th : threads) th.join();
  for (const auto& w : waiters) {
    EXPECT_EQ(w.outcome, ClaimOutcome::kHolderFinished);
    EXPECT_FALSE(w.claim.held());
  }
  EXPECT_EQ(files_in_claims(), 0u);
}

TEST_F(ClaimFileTest, AWaiterTakesOverFromAHolderThatDied) {
  ClaimDirectory claims(dir_, false);
  const int dead_holder = lock_directly("k");
  ClaimAttempt waiter;
  std::thread waiter_thread([&] { waiter = claims.claim_or_wait("k", 30s, kNever); });
  std::this_thread::sleep_for(100ms);
  close(dead_holder);  // what the kernel does when the holder is killed: the file stays
  waiter_thread.join();
  EXPECT_EQ(waiter.outcome, ClaimOutcome::kClaimed);
  EXPECT_TRUE(waiter.waited);
  EXPECT_TRUE(waiter.claim.held());
  waiter.claim.release();
  EXPECT_EQ(files_in_claims(), 0u);
}

TEST_F(ClaimFileTest, AWaitIsBoundedByTheTimeout) {
  ClaimDirectory claims(dir_, false);
  const int stuck_holder = lock_directly("k");
  std::atomic<int> lookups{0};
  const ClaimAttempt waiter = claims.claim_or_wait("k", 300ms, [&] { return lookups.fetch_add(1) < 0; });
  EXPECT_EQ(waiter.outcome, ClaimOutcome::kTimedOut);
  EXPECT_FALSE(waiter.claim.held());
  EXPECT_GE(waiter.wait_ns, 300'000'000);
  EXPECT_LT(waiter.wait_ns, 30'000'000'000);
  EXPECT_GT(lookups.load(), 3) << "the cache is looked up again between polls";
  close(stuck_holder);
}

TEST_F(ClaimFileTest, AForkedChildDoesNotKeepItsParentsClaim) {
  ClaimDirectory claims(dir_, false);
  ClaimAttempt holder = claims.claim_or_wait("k", 10s, kNever);
  ASSERT_EQ(holder.outcome, ClaimOutcome::kClaimed);
  const int same_file = open((dir_ + "/k").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(same_file, 0);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    char byte = 1;
    (void)!write(ready[1], &byte, 1);
    sleep(5);  // alive, and not exec'd, while the parent releases
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  holder.claim.release();
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  EXPECT_EQ(fcntl(same_file, F_OFD_SETLK, &lock), 0) << "the child still holds the lock: " << std::strerror(errno);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(same_file);
  close(ready[0]);
  close(ready[1]);
}

TEST_F(ClaimFileTest, AnUnusableDirectoryMeansNoClaimsAndNoWaiting) {
  const std::string file = (root_ / "a-file").string();
  close(open(file.c_str(), O_CREAT | O_WRONLY, 0600));
  ClaimDirectory under_a_file(file + "/claims", false);
  EXPECT_FALSE(under_a_file.usable());
  bool looked = false;
  const ClaimAttempt attempt = under_a_file.claim_or_wait("k", 10s, [&] { return looked = true; });
  EXPECT_EQ(attempt.outcome, ClaimOutcome::kUnavailable);
  EXPECT_FALSE(attempt.problem.empty());
  EXPECT_FALSE(looked);

  fs::create_directories(dir_);
  chmod(dir_.c_str(), 0777);
  EXPECT_FALSE(ClaimDirectory(dir_, false).usable()) << "a directory others can write is refused";
  EXPECT_TRUE(ClaimDirectory(dir_, true).usable()) << "unless the cache is shared on purpose";
  EXPECT_EQ(ClaimDirectory(dir_, true).claim_or_wait("../k", 1s, kNever).outcome, ClaimOutcome::kUnavailable);
}

// claims/ moved away and replaced by a link to another directory while a process uses it: claim
// files are created and removed in the directory opened at the start, never through the link.
TEST_F(ClaimFileTest, AClaimsDirectoryReplacedByALinkIsNeverFollowed) {
  ClaimDirectory claims(dir_, false);
  ASSERT_TRUE(claims.usable()) << claims.problem();
  const std::string elsewhere = (root_ / "elsewhere").string();
  fs::create_directories(elsewhere);
  std::ofstream(elsewhere + "/k") << "a file named like a claim";
  const std::string moved = (root_ / "claims.moved").string();
  fs::rename(dir_, moved);
  fs::create_directory_symlink(elsewhere, dir_);

  ClaimAttempt k = claims.claim_or_wait("k", 1s, kNever);
  ASSERT_EQ(k.outcome, ClaimOutcome::kClaimed) << k.problem;
  ClaimAttempt other = claims.claim_or_wait("other", 1s, kNever);
  ASSERT_EQ(other.outcome, ClaimOutcome::kClaimed) << other.problem;
  EXPECT_TRUE(fs::exists(moved + "/k"));
  EXPECT_TRUE(fs::exists(moved + "/other"));
  EXPECT_FALSE(fs::exists(elsewhere + "/other")) << "a claim file was created through the link";
  k.claim.release();
  other.claim.release();
  EXPECT_TRUE(fs::is_empty(moved));
  std::ifstream in(elsewhere + "/k");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "a file named like a claim");
  EXPECT_EQ(std::distance(fs::directory_iterator(elsewhere), fs::directory_iterator()), 1);
  EXPECT_FALSE(ClaimDirectory(dir_, false).usable()) << "a claims directory that is a link is refused";
}

// A program that closes descriptors it does not know and reuses the number for a file of its own:
// claims become unavailable, and nothing is created relative to the program's file.
TEST_F(ClaimFileTest, AHandleTheProgramReplacedMakesClaimsUnavailable) {
  ClaimDirectory claims(dir_, false);
  ASSERT_TRUE(claims.usable()) << claims.problem();
  int replaced = -1;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (fs::read_symlink(e.path(), ec).string() == dir_) replaced = std::stoi(e.path().filename().string());
  }
  ASSERT_GE(replaced, 0) << "the claims directory is not held open";
  const int own = open((root_ / "program-file").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(own, 0);
  ASSERT_EQ(dup2(own, replaced), replaced);
  close(own);
  const ClaimAttempt attempt = claims.claim_or_wait("k", 1s, kNever);
  EXPECT_EQ(attempt.outcome, ClaimOutcome::kUnavailable);
  EXPECT_NE(attempt.problem.find("descriptor"), std::string::npos) << attempt.problem;
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST(ClaimTimeout, DefaultFollowsTheLongestClaimWithinBounds) {
  EXPECT_EQ(default_wait_timeout(0s), 2min);
  EXPECT_EQ(default_wait_timeout(100s), 230s);
  EXPECT_EQ(default_wait_timeout(1h), 10min);
}

}  // namespace
}  // namespace nvrtc_cache::shim
