// Tests for LmdbStore under threads, processes and crashes: mixed readers and writers in threads and
// forked children lose nothing and keep totals exact, evicting or not; writers SIGKILLed at random
// points lose nothing (tests/support/store_testing.h's crash trials).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "store/lmdb/lmdb_store.h"
#include "tests/support/store_fixtures.h"
#include "tests/support/store_testing.h"

namespace nvrtc_cache::store {
namespace {

using testing::open_store;
using testing::TempDir;

// A value that names its key and version, so that any reader can check whatever it finds.
std::string tagged_value(int key, std::uint64_t version) {
  std::string value = "key=" + std::to_string(key) + ";v=" + std::to_string(version) + ";";
  std::uint64_t state = (static_cast<std::uint64_t>(key) << 40) ^ version;
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  const std::size_t size = 100 + static_cast<std::size_t>((state >> 33) % 30000);
  while (value.size() < size) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    value.push_back(static_cast<char>(state >> 56));
  }
  return value;
}

bool is_tagged_value_of(int key, const std::string& value) {
  unsigned long long version = 0;
  int found_key = -1;
  if (std::sscanf(value.c_str(), "key=%d;v=%llu;", &found_key, &version) != 2) return false;
  return found_key == key && value == tagged_value(key, version);
}

// Mixed readers and writers over `keys` keys; returns the number of failures: a failed put, a value
// that is not one some writer stored for that key, or a key this worker stored that is missing
// (only when `expect_kept`, i.e. nothing is evicted).
int mixed_worker(LmdbStore& store, int worker, int workers, int keys, int operations, bool expect_kept) {
  std::minstd_rand random(static_cast<unsigned>(worker) + 1);
  std::vector<bool> mine(static_cast<std::size_t>(keys), false);
  int failures = 0;
  auto put = [&](int key, std::uint64_t version) {
    if (store.put(std::to_string(key), tagged_value(key, version)).is_ok()) {
      mine[static_cast<std::size_t>(key)] = true;
    } else {
      ++failures;
    }
  };
  for (int key = worker; key < keys; key += workers) put(key, static_cast<std::uint64_t>(worker) << 32);
  for (int i = 0; i < operations; ++i) {
    const int key = static_cast<int>(random() % static_cast<unsigned>(keys));
    if (random() % 3 == 0) {
      put(key, (static_cast<std::uint64_t>(worker) << 32) + static_cast<std::uint64_t>(i) + 1);
      continue;
    }
    const auto got = store.get(std::to_string(key));
    if (got ? !is_tagged_value_of(key, *got) : (expect_kept && mine[static_cast<std::size_t>(key)])) ++failures;
  }
  return failures;
}

// Runs mixed_worker in `processes` forked children and `threads` threads of this process, all
// released at once; returns the total failures (a child that does not exit cleanly counts 1000).
int run_threads_and_processes(LmdbStore& store, int threads, int processes, int keys, int operations,
                              bool expect_kept) {
  const int workers = threads + processes;
  int gate[2];
  if (::pipe(gate) != 0) return 1000;
  std::vector<pid_t> children;
  for (int c = 0; c < processes; ++c) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(gate[1]);
      ::alarm(120);
      char byte;
      while (::read(gate[0], &byte, 1) > 0) {
      }
      const int failures = mixed_worker(store, threads + c, workers, keys, operations, expect_kept);
      ::_exit(failures > 100 ? 101 : failures);
    }
    if (pid > 0) children.push_back(pid);
  }
  ::close(gate[0]);
  std::atomic<bool> go{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      failures += mixed_worker(store, t, workers, keys, operations, expect_kept);
    });
  }
  ::close(gate[1]);  // releases the children
  go = true;
  for (auto& thread : pool) thread.join();
  int total = failures.load() + (processes - static_cast<int>(children.size())) * 1000;
  for (const pid_t pid : children) {
    int wstatus = 0;
    if (::waitpid(pid, &wstatus, 0) != pid || !WIFEXITED(wstatus)) {
      total += 1000;
    } else {
      total += WEXITSTATUS(wstatus);
    }
  }
  return total;
}

TEST(LmdbConcurrencyTest, SixteenThreadsAndEightProcessesLoseNothing) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  auto store = open_store(directory, 256ull << 20);
  ASSERT_NE(store, nullptr);
  constexpr int kKeys = 96;
  EXPECT_EQ(run_threads_and_processes(*store, 16, 8, kKeys, 240, /*expect_kept=*/true), 0);
  for (int key = 0; key < kKeys; ++key) {
    const auto got = store->get(std::to_string(key));
    ASSERT_TRUE(got.has_value()) << "key " << key << " lost";
    EXPECT_TRUE(is_tagged_value_of(key, *got)) << "key " << key;
  }
  EXPECT_EQ(store->entry_count(), static_cast<std::uint64_t>(kKeys));
  const testing::Recount counted = testing::recount(directory);
  EXPECT_TRUE(counted.totals_match());
  EXPECT_EQ(counted.entries, static_cast<std::uint64_t>(kKeys));
  EXPECT_EQ(counted.access_records, static_cast<std::uint64_t>(kKeys));
  EXPECT_EQ(store->size_bytes(), counted.payload_bytes);
}

TEST(LmdbConcurrencyTest, ThreadsAndProcessesEvictingConcurrentlyKeepTotalsExact) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  const std::uint64_t map_size = 8ull << 20;
  auto store = open_store(directory, map_size);
  ASSERT_NE(store, nullptr);
  constexpr int kKeys = 600;  // about 9 MiB of distinct values through an 8 MiB map
  EXPECT_EQ(run_threads_and_processes(*store, 8, 4, kKeys, 300, /*expect_kept=*/false), 0);
  const testing::Recount counted = testing::recount(directory);
  EXPECT_TRUE(counted.totals_match()) << counted.entries << " " << counted.payload_bytes << " vs "
                                      << counted.recorded_entries << " " << counted.recorded_payload_bytes
                                      << ", access mismatches " << counted.access_mismatches;
  EXPECT_EQ(store->entry_count(), counted.entries);
  EXPECT_EQ(store->size_bytes(), counted.payload_bytes);
  EXPECT_LT(counted.entries, static_cast<std::uint64_t>(kKeys));  // something was evicted
  EXPECT_LE(store->map_usage().used_bytes, map_size / 100 * 90);
  for (int key = 0; key < kKeys; ++key) {
    const auto got = store->get(std::to_string(key));
    if (got) {
      EXPECT_TRUE(is_tagged_value_of(key, *got)) << "key " << key;
    }
  }
}

TEST(LmdbCrashTest, WriterKilledAtRandomPointsLosesNothing) {
  TempDir tmp;
  testing::CrashTrialOptions options;
  options.trials = 40;
  options.seed = 20261121;
  const testing::CrashTrialReport report = testing::run_crash_trials(tmp.sub("store"), options);
  EXPECT_EQ(report.trials, 40);
  EXPECT_GT(report.committed, 0u);
  EXPECT_GT(report.killed, 30);
  EXPECT_EQ(report.lost, 0u) << report.first_problem;
  EXPECT_EQ(report.wrong_bytes, 0u) << report.first_problem;
  EXPECT_EQ(report.other_crashes, 0) << report.first_problem;
  EXPECT_EQ(report.put_failures, 0) << report.first_problem;
  EXPECT_EQ(report.open_failures, 0) << report.first_problem;
  EXPECT_EQ(report.totals_mismatches, 0) << report.first_problem;
}

TEST(LmdbCrashTest, WriterKilledWhileEvictingKeepsTotalsExact) {
  TempDir tmp;
  testing::CrashTrialOptions options;
  options.trials = 20;
  options.seed = 7;
  options.map_size_bytes = 4ull << 20;
  options.expect_everything_kept = false;
  const testing::CrashTrialReport report = testing::run_crash_trials(tmp.sub("store"), options);
  EXPECT_EQ(report.trials, 20);
  EXPECT_TRUE(report.clean()) << report.first_problem;
  EXPECT_LE(testing::recount(tmp.sub("store")).payload_bytes, 4ull << 20);
}

}  // namespace
}  // namespace nvrtc_cache::store
