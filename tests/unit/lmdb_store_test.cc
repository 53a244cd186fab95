// Tests for LmdbStore: round trips, persistence, totals and counters, damaged values and pages,
// fork (children and grandchildren, threads busy at the fork), map size, directory modes, errno.
#include <errno.h>
#include <gtest/gtest.h>
#include <lmdb.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "store/envelope.h"
#include "store/lmdb/lmdb_store.h"
#include "tests/support/store_fixtures.h"

namespace nvrtc_cache::store {
namespace {

using testing::binary_value;
using testing::open_store;
using testing::TempDir;

// Runs `body` in a forked child and returns its exit status (or -1 if it did not exit normally).
int run_in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  if (pid < 0) return -1;
  int wstatus = 0;
  if (::waitpid(pid, &wstatus, 0) != pid) return -1;
  return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
}

// In a child process: rewrites the stored bytes of `key` with `mutate` using the raw LMDB API
// (the way another process or a disk fault would). Returns 0 on success.
int mutate_raw_entry(const std::string& directory, std::uint64_t map_size, const std::string& key,
                     const std::function<void(std::string&)>& mutate) {
  MDB_env* env = nullptr;
  if (mdb_env_create(&env) != 0) return 10;
  mdb_env_set_maxdbs(env, 4);
  mdb_env_set_mapsize(env, map_size);
  if (mdb_env_open(env, directory.c_str(), 0, 0600) != 0) return 11;
  MDB_txn* txn = nullptr;
  if (mdb_txn_begin(env, nullptr, 0, &txn) != 0) return 12;
  MDB_dbi dbi = 0;
  if (mdb_dbi_open(txn, "entries", 0, &dbi) != 0) return 13;
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v;
  if (mdb_get(txn, dbi, &k, &v) != 0) return 14;
  std::string bytes(static_cast<const char*>(v.mv_data), v.mv_size);
  mutate(bytes);
  MDB_val updated{bytes.size(), bytes.data()};
  if (mdb_put(txn, dbi, &k, &updated, 0) != 0) return 15;
  if (mdb_txn_commit(txn) != 0) return 16;
  mdb_env_close(env);
  return 0;
}

TEST(LmdbStoreTest, RoundTripsBinaryValues) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"));
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->get("absent").has_value());
  const std::string value = binary_value(100000, 5);
  ASSERT_TRUE(store->put(std::string("k\0ey", 4), value).is_ok());
  EXPECT_EQ(store->get(std::string("k\0ey", 4)), value);
  ASSERT_TRUE(store->put("empty", "").is_ok());
  EXPECT_EQ(store->get("empty"), "");
  EXPECT_EQ(store->corrupt_entries_dropped(), 0u);
}

TEST(LmdbStoreTest, RejectsKeysLmdbCannotHold) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->put("", "v").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->put(std::string(4096, 'k'), "v").code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(store->get("").has_value());
  EXPECT_TRUE(store->erase("").is_ok());
}

TEST(LmdbStoreTest, PersistsAcrossCloseAndReopen) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  {
    auto store = open_store(directory);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->put("k", "persisted").is_ok());
    ASSERT_TRUE(store->add_counters({{"hits", 4}}).is_ok());
    store->close();
    EXPECT_FALSE(store->get("k").has_value());
    EXPECT_FALSE(store->put("k2", "v").is_ok());
    EXPECT_TRUE(store->counters().empty());
  }
  auto reopened = open_store(directory);
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->get("k"), "persisted");
  EXPECT_EQ(reopened->entry_count(), 1u);
  EXPECT_EQ(reopened->counters(), (Counters{{"hits", 4}}));
}

TEST(LmdbStoreTest, TotalsFollowPutOverwriteAndErase) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put("a", std::string(100, 'a')).is_ok());
  ASSERT_TRUE(store->put("b", std::string(50, 'b')).is_ok());
  EXPECT_EQ(store->entry_count(), 2u);
  EXPECT_EQ(store->size_bytes(), 150u);
  ASSERT_TRUE(store->put("a", std::string(10, 'A')).is_ok());  // overwrite: no new entry
  EXPECT_EQ(store->entry_count(), 2u);
  EXPECT_EQ(store->size_bytes(), 60u);
  ASSERT_TRUE(store->put("a", std::string(10, 'A')).is_ok());  // identical rewrite
  EXPECT_EQ(store->size_bytes(), 60u);
  ASSERT_TRUE(store->erase("b").is_ok());
  ASSERT_TRUE(store->erase("b").is_ok());  // absent: not an error, no change
  EXPECT_EQ(store->entry_count(), 1u);
  EXPECT_EQ(store->size_bytes(), 10u);
  EXPECT_FALSE(store->get("b").has_value());
  EXPECT_TRUE(store->counters().empty());  // totals are not counters
}

TEST(LmdbStoreTest, CountersAddUp) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->add_counters({}).is_ok());
  ASSERT_TRUE(store->add_counters({{"hits", 1}, {"misses", 2}}).is_ok());
  ASSERT_TRUE(store->add_counters({{"hits", 10}, {"saved_ns", -3}}).is_ok());
  EXPECT_EQ(store->counters(), (Counters{{"hits", 11}, {"misses", 2}, {"saved_ns", -3}}));
}

TEST(LmdbStoreTest, ClearRemovesEntriesAndCounters) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put("a", "1").is_ok());
  ASSERT_TRUE(store->put("b", "22").is_ok());
  ASSERT_TRUE(store->add_counters({{"hits", 1}}).is_ok());
  ASSERT_TRUE(store->clear().is_ok());
  EXPECT_EQ(store->entry_count(), 0u);
  EXPECT_EQ(store->size_bytes(), 0u);
  EXPECT_TRUE(store->counters().empty());
  EXPECT_FALSE(store->get("a").has_value());
  ASSERT_TRUE(store->put("c", "333").is_ok());  // usable afterwards
  EXPECT_EQ(store->entry_count(), 1u);
  EXPECT_EQ(store->size_bytes(), 3u);
}

TEST(LmdbStoreTest, TwoOpensOnOneDirectoryShareData) {
  TempDir tmp;
  auto first = open_store(tmp.sub("store"));
  auto second = open_store(tmp.sub("store") + "/.");  // another spelling of the same directory
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(first->put("k", "shared").is_ok());
  EXPECT_EQ(second->get("k"), "shared");
  first->close();  // the other store keeps the environment open
  EXPECT_EQ(second->get("k"), "shared");
  ASSERT_TRUE(second->put("k2", "v").is_ok());
  EXPECT_EQ(second->entry_count(), 2u);
}

// A large value lives in overflow pages of its own: damage there is dropped with the entry alone.
TEST(LmdbStoreTest, CorruptValueIsAMissAndIsDropped) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  const std::uint64_t map_size = 64ull << 20;
  auto store = open_store(directory, map_size);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put("good", "fine").is_ok());
  ASSERT_TRUE(store->put("bad", binary_value(20000, 9)).is_ok());
  ASSERT_EQ(run_in_child([&] {
              return mutate_raw_entry(directory, map_size, "bad",
                                      [](std::string& bytes) { bytes[kEnvelopeHeaderSize + 7] ^= 0x10; });
            }),
            0);
  EXPECT_FALSE(store->get("bad").has_value());
  EXPECT_EQ(store->corrupt_entries_dropped(), 1u);
  EXPECT_EQ(store->entry_count(), 1u);  // dropped, and the totals follow
  EXPECT_EQ(store->size_bytes(), 4u);
  EXPECT_FALSE(store->get("bad").has_value());
  EXPECT_EQ(store->corrupt_entries_dropped(), 1u);  // already gone: a plain miss
  EXPECT_EQ(store->get("good"), "fine");
  EXPECT_EQ(store->stores_quarantined(), 0u);
}

// A small value lives inside a leaf page: its damage means the leaf is damaged, and rewriting it
// could make LMDB overrun memory. The whole store is moved aside and a fresh one serves from then on.
TEST(LmdbStoreTest, DamagedLeafMovesTheStoreAsideInsteadOfWritingToIt) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  const std::uint64_t map_size = 64ull << 20;
  auto store = open_store(directory, map_size);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put("good", "fine").is_ok());
  ASSERT_TRUE(store->put("bad", binary_value(1000, 9)).is_ok());
  ASSERT_EQ(run_in_child([&] {
              return mutate_raw_entry(directory, map_size, "bad",
                                      [](std::string& bytes) { bytes[kEnvelopeHeaderSize + 7] ^= 0x10; });
            }),
            0);
  EXPECT_FALSE(store->get("bad").has_value());
  EXPECT_EQ(store->stores_quarantined(), 1u);
  EXPECT_FALSE(store->get("good").has_value());  // a fresh store
  ASSERT_TRUE(store->put("new", "value").is_ok());
  EXPECT_EQ(store->get("new"), "value");
  int aside = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
    aside += e.path().filename().string().rfind("store.corrupt-", 0) == 0;
  }
  EXPECT_EQ(aside, 1);
}

TEST(LmdbStoreTest, ValueStoredUnderAnotherKeyIsAMiss) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  const std::uint64_t map_size = 64ull << 20;
  auto store = open_store(directory, map_size);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put("victim", "v").is_ok());
  ASSERT_EQ(run_in_child([&] {
              return mutate_raw_entry(directory, map_size, "victim",
                                      [](std::string& bytes) { bytes = wrap_value("other", "v"); });
            }),
            0);
  EXPECT_FALSE(store->get("victim").has_value());
  EXPECT_EQ(store->corrupt_entries_dropped(), 1u);
  EXPECT_EQ(store->entry_count(), 0u);
}

TEST(LmdbStoreTest, ForkedChildUsesStoreAndParentStillWorks) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put("parent", "p").is_ok());
  ASSERT_EQ(store->get("parent"), "p");
  const int child_status = run_in_child([&] {
    if (store->get("parent") != "p") return 1;
    if (!store->put("child", "c").is_ok()) return 2;
    if (!store->add_counters({{"child_ops", 1}}).is_ok()) return 3;
    if (store->get("child") != "c") return 4;
    store->close();  // releases the child's own environment; the inherited one is never closed
    return 0;
  });
  ASSERT_EQ(child_status, 0);
  EXPECT_EQ(store->get("child"), "c");
  ASSERT_TRUE(store->put("after", "a").is_ok());
  EXPECT_EQ(store->get("after"), "a");
  EXPECT_EQ(store->entry_count(), 3u);
  EXPECT_EQ(store->counters(), (Counters{{"child_ops", 1}}));
  // A second generation: a child whose parent was itself a forked child.
  const int grandchild_status = run_in_child([&] {
    if (!store->put("child2", "c2").is_ok()) return 1;
    return run_in_child([&] { return store->put("grandchild", "g").is_ok() ? 0 : 1; });
  });
  ASSERT_EQ(grandchild_status, 0);
  EXPECT_EQ(store->get("grandchild"), "g");
  EXPECT_EQ(store->get("child2"), "c2");
}

TEST(LmdbStoreTest, ForkWhileOtherThreadsUseTheStore) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"));
  ASSERT_NE(store, nullptr);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; !stop.load(); ++i) {
        const std::string key = "busy" + std::to_string(t) + "-" + std::to_string(i % 20);
        if (!store->put(key, key).is_ok() || store->get(key) != key) ++failures;
      }
    });
  }
  for (int round = 0; round < 20; ++round) {
    const int child_status = run_in_child([&] {
      // A deadlock fails the test instead of hanging it; generous, since under the sanitizers on two
      // cores the child's one write waits its turn against four threads writing in a loop.
      ::alarm(60);
      const std::string key = "forked" + std::to_string(round);
      if (!store->put(key, "x").is_ok()) return 1;
      return store->get(key) == "x" ? 0 : 2;
    });
    EXPECT_EQ(child_status, 0) << "round " << round;
  }
  stop = true;
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (int round = 0; round < 20; ++round) EXPECT_EQ(store->get("forked" + std::to_string(round)), "x");
}

TEST(LmdbStoreTest, StoreOpenedInChildWorks) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  auto store = open_store(directory);
  ASSERT_NE(store, nullptr);
  const int child_status = run_in_child([&] {
    Status status;
    auto own = LmdbStore::open(LmdbOptions{directory, 64ull << 20}, &status);
    if (own == nullptr) return 1;
    if (!own->put("k", "from child").is_ok()) return 2;
    return store->get("k") == "from child" ? 0 : 3;  // the inherited store shares the new env
  });
  ASSERT_EQ(child_status, 0);
  EXPECT_EQ(store->get("k"), "from child");
}

TEST(LmdbStoreTest, MapFullIsReportedAsFull) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"), 1ull << 20);
  ASSERT_NE(store, nullptr);
  const Status status = store->put("big", std::string(2u << 20, 'x'));
  EXPECT_EQ(status.code(), Status::Code::kFull) << status.message();
  EXPECT_FALSE(store->get("big").has_value());
  EXPECT_EQ(store->entry_count(), 0u);
  ASSERT_TRUE(store->put("small", "fits").is_ok());
  EXPECT_EQ(store->get("small"), "fits");
}

TEST(LmdbStoreTest, AdoptsMapGrownByAnotherProcess) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  auto store = open_store(directory, 1ull << 20);
  ASSERT_NE(store, nullptr);
  const std::string big = binary_value(3u << 20, 6);
  const int child_status = run_in_child([&] {
    Status status;
    auto larger = LmdbStore::open(LmdbOptions{directory, 16ull << 20}, &status);
    // The inherited store is stale in the child, so this open creates the child's own env.
    if (larger == nullptr) return 1;
    return larger->put("big", big).is_ok() ? 0 : 2;
  });
  ASSERT_EQ(child_status, 0);
  EXPECT_EQ(store->get("big"), big);
  EXPECT_EQ(store->size_bytes(), big.size());
}

TEST(LmdbStoreTest, CreatesDirectoriesPrivately) {
  TempDir tmp;
  const std::string directory = tmp.sub("a/b/store");
  auto store = open_store(directory);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put("k", "v").is_ok());
  for (const std::string& path : {tmp.sub("a"), tmp.sub("a/b"), directory}) {
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u) << path;
  }
  for (const char* file : {"/data.mdb", "/lock.mdb"}) {
    struct stat st {};
    ASSERT_EQ(::stat((directory + file).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0077, 0u) << file;
  }
}

TEST(LmdbStoreTest, OpenFailsCleanlyOnUnusablePaths) {
  errno = 4242;
  Status status;
  EXPECT_EQ(LmdbStore::open(LmdbOptions{"/proc/nonexistent/x", 1ull << 20}, &status), nullptr);
  EXPECT_FALSE(status.is_ok());
  EXPECT_FALSE(status.message().empty());
  EXPECT_EQ(errno, 4242);

  TempDir tmp;
  const std::string file = tmp.sub("file");
  {
    FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  EXPECT_EQ(LmdbStore::open(LmdbOptions{file, 1ull << 20}, &status), nullptr);
  EXPECT_FALSE(status.is_ok());
  EXPECT_EQ(LmdbStore::open(LmdbOptions{"", 1ull << 20}, nullptr), nullptr);  // null status is fine
}

TEST(LmdbStoreTest, PreservesErrno) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"));
  ASSERT_NE(store, nullptr);
  errno = 777;
  (void)store->put("k", "v");
  (void)store->get("k");
  (void)store->get("absent");
  (void)store->erase("k");
  (void)store->add_counters({{"c", 1}});
  (void)store->counters();
  (void)store->entry_count();
  (void)store->size_bytes();
  (void)store->evict(EvictOptions{});
  (void)store->map_usage();
  (void)store->clear();
  store->close();
  (void)store->get("k");
  (void)store->evict(EvictOptions{});
  EXPECT_EQ(errno, 777);
}

TEST(LmdbStoreTest, ConcurrentPutAndGetFromEightThreads) {
  TempDir tmp;
  auto store = open_store(tmp.sub("store"));
  ASSERT_NE(store, nullptr);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&store, &failures, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string key = "t" + std::to_string(t) + "-" + std::to_string(i % 50);
        const std::string value = binary_value(static_cast<std::size_t>(100 + i), static_cast<unsigned>(t));
        if (!store->put(key, value).is_ok()) ++failures;
        if (store->get(key) != value) ++failures;
        if (i % 20 == 0 && !store->add_counters({{"ops", 1}}).is_ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(store->entry_count(), 8u * 50u);
  EXPECT_EQ(store->counters(), (Counters{{"ops", 8 * 10}}));
  std::uint64_t expected_bytes = 0;
  for (int i = 150; i < 200; ++i) expected_bytes += static_cast<std::uint64_t>(100 + i);
  EXPECT_EQ(store->size_bytes(), 8u * expected_bytes);
}

}  // namespace
}  // namespace nvrtc_cache::store
