// Tests for LmdbStore's size cap, LRU eviction and touches: a full disk or map evicts and retries
// once, evict by age and by size, coarse batched touches, reader slots of killed processes.
#include <errno.h>
#include <gtest/gtest.h>
#include <lmdb.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "platform/env.h"
#include "store/lmdb/lmdb_store.h"
#include "tests/support/store_fixtures.h"
#include "tests/support/store_testing.h"

namespace nvrtc_cache::store {
namespace {

using testing::binary_value;
using testing::open_store;
using testing::TempDir;

// The system platform::Env with a clock the test moves, and puts that can be made to report MDB_MAP_FULL.
class TestEnv final : public platform::Env {
 public:
  std::atomic<std::int64_t> now{1'000'000};
  std::atomic<int> map_full_puts{0};   // the next this-many put attempts report MDB_MAP_FULL
  std::atomic<int> disk_full_puts{0};  // then this many report ENOSPC

  void advance(std::int64_t seconds) { now += seconds; }

  std::int64_t now_seconds() override { return now.load(); }
  int fault_for(platform::StoreOperation operation) override {
    if (operation != platform::StoreOperation::kPut) return 0;
    for (int left = map_full_puts.load(); left > 0;) {
      if (map_full_puts.compare_exchange_weak(left, left - 1)) return MDB_MAP_FULL;
    }
    for (int left = disk_full_puts.load(); left > 0;) {
      if (disk_full_puts.compare_exchange_weak(left, left - 1)) return ENOSPC;
    }
    return 0;
  }
};

std::unique_ptr<LmdbStore> open_with_env(const std::string& directory, std::uint64_t map_size, platform::Env* env) {
  LmdbOptions options;
  options.directory = directory;
  options.map_size_bytes = map_size;
  options.env = env;
  Status status;
  auto store = LmdbStore::open(options, &status);
  EXPECT_TRUE(status.is_ok()) << status.message();
  return store;
}

std::string numbered(const std::string& prefix, int i) { return prefix + std::to_string(i); }

TEST(LmdbEvictionTest, FullDiskEvictsAndRetriesOnceThenGivesUpCleanly) {
  TempDir tmp;
  TestEnv env;
  auto store = open_with_env(tmp.sub("store"), 16ull << 20, &env);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(store->put(numbered("old-", i), binary_value(64u << 10, i)).is_ok());
  env.disk_full_puts = 1;  // the first attempt finds the disk full; the retry after evicting works
  EXPECT_TRUE(store->put("after-one", "v").is_ok());
  EXPECT_EQ(store->get("after-one"), "v");
  env.disk_full_puts = 2;  // still full after evicting: the put fails, nothing else does
  const Status failed = store->put("after-two", "v");
  EXPECT_FALSE(failed.is_ok());
  EXPECT_NE(failed.message().find("No space left"), std::string::npos) << failed.message();
  EXPECT_FALSE(store->get("after-two").has_value());
  EXPECT_TRUE(store->put("later", "w").is_ok());  // (eviction may have taken older entries)
  EXPECT_EQ(store->get("later"), "w");
}

TEST(LmdbEvictionTest, SmallMapStaysUnderItsCapAndTheHotKeySurvives) {
  TempDir tmp;
  TestEnv env;
  const std::uint64_t map_size = 4ull << 20;
  auto store = open_with_env(tmp.sub("store"), map_size, &env);
  ASSERT_NE(store, nullptr);
  const std::string hot = binary_value(64u << 10, 1);
  ASSERT_TRUE(store->put("hot", hot).is_ok());
  ASSERT_TRUE(store->put("never-read", binary_value(64u << 10, 2)).is_ok());
  constexpr int kPuts = 150;  // about 10 MiB through a 4 MiB map
  for (int i = 0; i < kPuts; ++i) {
    env.advance(10);
    const Status status = store->put(numbered("cold-", i), binary_value((64u << 10) + i, 3 + i));
    ASSERT_TRUE(status.is_ok()) << "put " << i << ": " << status.message();
    const MapUsage usage = store->map_usage();
    EXPECT_EQ(usage.map_bytes, map_size);
    EXPECT_LE(usage.used_bytes, map_size / 100 * 75) << "after put " << i;
    ASSERT_EQ(store->get("hot"), hot) << "after put " << i;
  }
  EXPECT_FALSE(store->get("never-read").has_value());
  EXPECT_FALSE(store->get("cold-0").has_value());
  EXPECT_EQ(store->get(numbered("cold-", kPuts - 1)), binary_value((64u << 10) + kPuts - 1, 3 + kPuts - 1));
  EXPECT_LT(store->entry_count(), 50u);
  EXPECT_GT(store->entry_count(), 20u);
  EXPECT_LE(store->size_bytes(), map_size);
  const testing::Recount counted = testing::recount(tmp.sub("store"));
  EXPECT_TRUE(counted.totals_match()) << counted.entries << " " << counted.payload_bytes << " vs "
                                      << counted.recorded_entries << " " << counted.recorded_payload_bytes;
  EXPECT_EQ(counted.entries, store->entry_count());
  EXPECT_EQ(counted.payload_bytes, store->size_bytes());
  struct stat st {};
  ASSERT_EQ(::stat(tmp.sub("store/data.mdb").c_str(), &st), 0);
  EXPECT_LE(static_cast<std::uint64_t>(st.st_size), map_size);
}

TEST(LmdbEvictionTest, EvictOlderThanRemovesEntriesNotReadSince) {
  TempDir tmp;
  TestEnv env;
  auto store = open_with_env(tmp.sub("store"), 64ull << 20, &env);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put("a", std::string(100, 'a')).is_ok());
  ASSERT_TRUE(store->put("b", std::string(200, 'b')).is_ok());
  ASSERT_TRUE(store->put("c", std::string(300, 'c')).is_ok());
  env.advance(1000);
  ASSERT_TRUE(store->get("a").has_value());  // read: a is recent again
  ASSERT_TRUE(store->put("d", std::string(400, 'd')).is_ok());
  EvictResult result;
  ASSERT_TRUE(store->evict(EvictOptions{std::nullopt, 500}, &result).is_ok());
  EXPECT_EQ(result.entries, 2u);
  EXPECT_EQ(result.bytes, 500u);
  EXPECT_FALSE(store->get("b").has_value());
  EXPECT_FALSE(store->get("c").has_value());
  EXPECT_TRUE(store->get("a").has_value());
  EXPECT_TRUE(store->get("d").has_value());
  EXPECT_EQ(store->entry_count(), 2u);
  EXPECT_EQ(store->size_bytes(), 500u);
  ASSERT_TRUE(store->evict(EvictOptions{std::nullopt, 500}, &result).is_ok());  // nothing more is old
  EXPECT_EQ(result.entries, 0u);
  env.advance(1);
  ASSERT_TRUE(store->evict(EvictOptions{std::nullopt, 0}, &result).is_ok());  // everything is older than now
  EXPECT_EQ(result.entries, 2u);
  EXPECT_EQ(store->entry_count(), 0u);
  EXPECT_EQ(store->size_bytes(), 0u);
  EXPECT_EQ(store->evict(EvictOptions{std::nullopt, -1}).code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(testing::recount(tmp.sub("store")).totals_match());
}

TEST(LmdbEvictionTest, EvictMaxBytesRemovesLeastRecentlyAccessedFirst) {
  TempDir tmp;
  TestEnv env;
  auto store = open_with_env(tmp.sub("store"), 64ull << 20, &env);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(store->put(numbered("k", i), std::string(1000, static_cast<char>('0' + i))).is_ok());
    env.advance(100);
  }
  ASSERT_TRUE(store->get("k0").has_value());  // the oldest entry, read now: the most recent
  EvictResult result;
  ASSERT_TRUE(store->evict(EvictOptions{4500, std::nullopt}, &result).is_ok());
  EXPECT_EQ(result.entries, 6u);
  EXPECT_EQ(result.bytes, 6000u);
  EXPECT_EQ(store->size_bytes(), 4000u);
  for (int i = 1; i <= 6; ++i) EXPECT_FALSE(store->get(numbered("k", i)).has_value()) << i;
  for (int i : {0, 7, 8, 9}) EXPECT_TRUE(store->get(numbered("k", i)).has_value()) << i;
  ASSERT_TRUE(store->evict(EvictOptions{4000, std::nullopt}, &result).is_ok());  // already there
  EXPECT_EQ(result.entries, 0u);
  ASSERT_TRUE(store->evict(EvictOptions{0, std::nullopt}, &result).is_ok());
  EXPECT_EQ(result.entries, 4u);
  EXPECT_EQ(store->entry_count(), 0u);
}

TEST(LmdbEvictionTest, EvictWithoutOptionsTrimsOnlyAboveTheHighWaterMark) {
  TempDir tmp;
  TestEnv env;
  auto store = open_with_env(tmp.sub("store"), 64ull << 20, &env);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put("k", std::string(50000, 'k')).is_ok());
  EvictResult result;
  ASSERT_TRUE(store->evict(EvictOptions{}, &result).is_ok());
  EXPECT_EQ(result.entries, 0u);
  EXPECT_EQ(store->entry_count(), 1u);
  const MapUsage usage = store->map_usage();
  EXPECT_EQ(usage.map_bytes, 64ull << 20);
  EXPECT_GT(usage.used_bytes, 50000u);
  EXPECT_LT(usage.used_bytes, 1ull << 20);
}

TEST(LmdbEvictionTest, TouchesAreCoarseBatchedAndWrittenOnClose) {
  TempDir tmp;
  TestEnv env;
  const std::string directory = tmp.sub("store");
  auto store = open_with_env(directory, 64ull << 20, &env);
  ASSERT_NE(store, nullptr);
  const std::int64_t t0 = env.now;
  ASSERT_TRUE(store->put("a", "alpha").is_ok());
  ASSERT_TRUE(store->put("b", "beta").is_ok());
  EXPECT_EQ(testing::recorded_last_access(directory, "a"), t0);
  env.advance(100);
  ASSERT_TRUE(store->get("b").has_value());  // over 30 s since the open: written at once
  EXPECT_EQ(testing::recorded_last_access(directory, "b"), t0 + 100);
  env.advance(10);
  ASSERT_TRUE(store->get("a").has_value());  // queued: the last write was 10 s ago
  ASSERT_TRUE(store->get("a").has_value());
  ASSERT_TRUE(store->get("b").has_value());  // recorded 10 s ago: not even queued
  EXPECT_EQ(testing::recorded_last_access(directory, "a"), t0);
  env.advance(5);
  store->close();  // writes the queue
  EXPECT_EQ(testing::recorded_last_access(directory, "a"), t0 + 115);
  EXPECT_EQ(testing::recorded_last_access(directory, "b"), t0 + 100);

  // A full queue (1024 keys) is written at once, whatever the time.
  auto reopened = open_with_env(directory, 64ull << 20, &env);
  ASSERT_NE(reopened, nullptr);
  for (int i = 0; i < 1100; ++i) ASSERT_TRUE(reopened->put(numbered("q", i), "v").is_ok());
  const std::int64_t t1 = env.now;
  env.advance(100);
  ASSERT_TRUE(reopened->get("q1099").has_value());  // written (over 30 s since the last write)
  env.advance(1);
  for (int i = 0; i < 1023; ++i) ASSERT_TRUE(reopened->get(numbered("q", i)).has_value());
  EXPECT_EQ(testing::recorded_last_access(directory, "q0"), t1);  // 1023 queued
  ASSERT_TRUE(reopened->get("q1023").has_value());                // the 1024th
  EXPECT_EQ(testing::recorded_last_access(directory, "q0"), t1 + 101);
  EXPECT_EQ(testing::recorded_last_access(directory, "q1023"), t1 + 101);
  EXPECT_EQ(testing::recorded_last_access(directory, "q1024"), t1);
}

// A fresh process's reads write nothing (no commit on its first hits): their touches wait for the
// next counters update, which writes them in its own transaction (the shim's flush at exit).
TEST(LmdbEvictionTest, FirstReadsQueueTouchesThatRideOnTheCountersUpdate) {
  TempDir tmp;
  TestEnv env;
  const std::string directory = tmp.sub("store");
  const std::int64_t t0 = env.now;
  {
    auto writer = open_with_env(directory, 64ull << 20, &env);
    ASSERT_NE(writer, nullptr);
    ASSERT_TRUE(writer->put("a", "alpha").is_ok());
    ASSERT_TRUE(writer->put("b", "beta").is_ok());
  }
  ASSERT_EQ(testing::recorded_last_access(directory, "a"), t0);
  env.advance(100);  // both records are stale now
  auto reader = open_with_env(directory, 64ull << 20, &env);
  ASSERT_NE(reader, nullptr);
  const std::int64_t t1 = env.now;
  ASSERT_TRUE(reader->get("a").has_value());
  env.advance(5);
  ASSERT_TRUE(reader->get("b").has_value());
  EXPECT_EQ(testing::recorded_last_access(directory, "a"), t0);  // queued, not written
  EXPECT_EQ(testing::recorded_last_access(directory, "b"), t0);
  ASSERT_TRUE(reader->add_counters({{"hits", 2}}).is_ok());
  EXPECT_EQ(reader->counters().at("hits"), 2);
  EXPECT_EQ(testing::recorded_last_access(directory, "a"), t1 + 5);
  EXPECT_EQ(testing::recorded_last_access(directory, "b"), t1 + 5);
  // Later reads follow the 30 s rule, counted from that write.
  env.advance(100);
  ASSERT_TRUE(reader->get("a").has_value());
  EXPECT_EQ(testing::recorded_last_access(directory, "a"), t1 + 105);  // 100 s since the last write
}

TEST(LmdbEvictionTest, MapFullEvictsAndRetriesOnce) {
  TempDir tmp;
  TestEnv env;
  const std::uint64_t map_size = 4ull << 20;
  auto store = open_with_env(tmp.sub("store"), map_size, &env);
  ASSERT_NE(store, nullptr);
  // Fill to between 65% and 75%: no automatic eviction yet.
  int count = 0;
  while (store->map_usage().used_bytes < map_size / 100 * 65) {
    env.advance(10);
    ASSERT_TRUE(store->put(numbered("e", count), binary_value(40000, static_cast<unsigned>(count))).is_ok());
    ++count;
  }
  ASSERT_LE(store->map_usage().used_bytes, map_size / 100 * 75);
  ASSERT_EQ(store->entry_count(), static_cast<std::uint64_t>(count));
  env.map_full_puts = 1;  // the put hits MDB_MAP_FULL once: evict (to 60%), then it succeeds
  env.advance(10);
  const Status retried = store->put("after-full", binary_value(40000, 99));
  ASSERT_TRUE(retried.is_ok()) << retried.message();
  EXPECT_EQ(store->get("after-full"), binary_value(40000, 99));
  EXPECT_FALSE(store->get("e0").has_value());  // the least recently used went first
  EXPECT_LT(store->entry_count(), static_cast<std::uint64_t>(count) + 1);
  EXPECT_TRUE(store->get(numbered("e", count - 1)).has_value());
  const std::uint64_t entries = store->entry_count();
  env.map_full_puts = 2;  // full again after the eviction: reported, nothing stored
  const Status full = store->put("still-full", "x");
  EXPECT_EQ(full.code(), Status::Code::kFull) << full.message();
  EXPECT_FALSE(store->get("still-full").has_value());
  EXPECT_LE(store->entry_count(), entries);
  EXPECT_TRUE(testing::recount(tmp.sub("store")).totals_match());
}

TEST(LmdbEvictionTest, ValueAboveHalfTheMapIsRefusedWithoutEvicting) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"), 4ull << 20);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store->put(numbered("k", i), binary_value(100000, i)).is_ok());
  const Status status = store->put("huge", std::string((2u << 20) + 1, 'x'));
  EXPECT_EQ(status.code(), Status::Code::kFull) << status.message();
  EXPECT_EQ(store->entry_count(), 5u);
  ASSERT_TRUE(store->put("large", std::string(1u << 20, 'y')).is_ok());  // a quarter of the map fits
  EXPECT_EQ(store->entry_count(), 6u);
}

TEST(LmdbEvictionTest, ReaderSlotsOfKilledProcessesAreReclaimedAtOpen) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  ASSERT_EQ(::mkdir(directory.c_str(), 0700), 0);
  // A process that dies inside a read transaction, with the raw LMDB API.
  auto kill_a_reader = [&] {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      MDB_env* env = nullptr;
      MDB_txn* txn = nullptr;
      if (mdb_env_create(&env) != 0 || mdb_env_set_maxdbs(env, 8) != 0 ||
          mdb_env_open(env, directory.c_str(), MDB_NOTLS, 0600) != 0 ||
          mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) != 0) {
        ::_exit(1);
      }
      const char ready = 1;
      if (::write(fds[1], &ready, 1) != 1) ::_exit(2);
      ::pause();
      ::_exit(0);
    }
    ::close(fds[1]);
    char ready = 0;
    EXPECT_EQ(::read(fds[0], &ready, 1), 1);
    ::close(fds[0]);
    ::kill(pid, SIGKILL);
    int wstatus = 0;
    ::waitpid(pid, &wstatus, 0);
    EXPECT_TRUE(WIFSIGNALED(wstatus));
  };
  // LMDB resets the reader table when a process opens an environment nobody else has open, so a
  // live process keeps it open throughout (as a long-running host would).
  int hold[2];
  int opened[2];
  ASSERT_EQ(::pipe(hold), 0);
  ASSERT_EQ(::pipe(opened), 0);
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    ::close(hold[1]);
    ::close(opened[0]);
    ::alarm(60);
    MDB_env* env = nullptr;
    if (mdb_env_create(&env) != 0 || mdb_env_set_maxdbs(env, 8) != 0 ||
        mdb_env_open(env, directory.c_str(), MDB_NOTLS, 0600) != 0) {
      ::_exit(1);
    }
    const char ready = 1;
    if (::write(opened[1], &ready, 1) != 1) ::_exit(2);
    char byte;
    while (::read(hold[0], &byte, 1) > 0) {
    }
    ::_exit(0);
  }
  ::close(hold[0]);
  ::close(opened[1]);
  char ready = 0;
  ASSERT_EQ(::read(opened[0], &ready, 1), 1);  // the holder has the environment open
  ::close(opened[0]);
  kill_a_reader();
  EXPECT_EQ(testing::dead_reader_slots(directory), 1);  // the check sees it (and clears it)
  kill_a_reader();
  {
    auto store = open_store(directory);  // the first open in this process checks for dead readers
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(testing::dead_reader_slots(directory), 0);
  }
  ::close(hold[1]);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(holder, &wstatus, 0), holder);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
}

}  // namespace
}  // namespace nvrtc_cache::store
