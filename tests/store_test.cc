// Tests for store/: the envelope format, MemoryStore and LmdbStore (including fork and
// multi-process behaviour, exercised with forked children).
#include <errno.h>
#include <gtest/gtest.h>
#include <lmdb.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/env.h"
#include "store/envelope.h"
#include "store/lmdb/lmdb_store.h"
#include "store/memory_store.h"
#include "tests/store_testing.h"
#include "util/binary_io.h"

namespace nvrtc_cache::store {
namespace {

// ---- Helpers --------------------------------------------------------------------------------

// A fresh directory under /tmp, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/nvrtc_cache_store_test.XXXXXX";
    const char* made = ::mkdtemp(pattern);
    if (made != nullptr) path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Runs `body` in a forked child and returns its exit status (or -1 if it did not exit normally).
int run_in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  if (pid < 0) return -1;
  int wstatus = 0;
  if (::waitpid(pid, &wstatus, 0) != pid) return -1;
  return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
}

std::string binary_value(std::size_t size, unsigned seed) {
  std::string value(size, '\0');
  for (std::size_t i = 0; i < size; ++i) value[i] = static_cast<char>((i * 131 + seed * 7) & 0xff);
  return value;
}

std::unique_ptr<LmdbStore> open_store(const std::string& directory,
                                      std::uint64_t map_size = 64ull << 20) {
  Status status;
  auto store = LmdbStore::open(LmdbOptions{directory, map_size}, &status);
  EXPECT_TRUE(status.is_ok()) << status.message();
  return store;
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

// ---- Envelope -------------------------------------------------------------------------------

TEST(EnvelopeTest, RoundTrips) {
  for (const std::string& payload : {std::string(), std::string("x"), binary_value(4096, 3)}) {
    const std::string stored = wrap_value("key", payload);
    EXPECT_EQ(stored.size(), wrapped_size(payload.size()));
    EXPECT_EQ(payload_size_of(stored.size()), payload.size());
    const auto unwrapped = unwrap_value("key", stored);
    ASSERT_TRUE(unwrapped.has_value());
    EXPECT_EQ(*unwrapped, payload);
  }
}

TEST(EnvelopeTest, LayoutIsLittleEndian) {
  const std::string stored = wrap_value("k", "abc");
  EXPECT_EQ(stored.substr(0, 4), "NVCE");
  EXPECT_EQ(stored.substr(4, 4), std::string("\x01\x00\x00\x00", 4));  // version 1
  EXPECT_EQ(stored.substr(8, 8), std::string("\x03\0\0\0\0\0\0\0", 8));  // length 3
  EXPECT_EQ(stored.substr(kEnvelopeHeaderSize, 3), "abc");
}

TEST(EnvelopeTest, WrapIntoMatchesWrap) {
  const std::string payload = binary_value(100, 1);
  std::string buffer(wrapped_size(payload.size()), '\0');
  wrap_value_into("key", payload, buffer.data());
  EXPECT_EQ(buffer, wrap_value("key", payload));
}

TEST(EnvelopeTest, EveryFlippedByteIsDetected) {
  const std::string stored = wrap_value("key", binary_value(64, 2));
  for (std::size_t i = 0; i < stored.size(); ++i) {
    for (const int mask : {0x01, 0x80, 0xff}) {
      std::string damaged = stored;
      damaged[i] = static_cast<char>(damaged[i] ^ mask);
      EXPECT_FALSE(unwrap_value("key", damaged).has_value()) << "byte " << i << " mask " << mask;
    }
  }
}

TEST(EnvelopeTest, WrongKeyIsDetected) {
  const std::string stored = wrap_value("key-a", "payload");
  EXPECT_FALSE(unwrap_value("key-b", stored).has_value());
  EXPECT_FALSE(unwrap_value("", stored).has_value());
  EXPECT_TRUE(unwrap_value("key-a", stored).has_value());
}

TEST(EnvelopeTest, TruncationAndExtensionAreDetected) {
  const std::string stored = wrap_value("key", binary_value(50, 4));
  for (std::size_t size = 0; size < stored.size(); ++size) {
    EXPECT_FALSE(unwrap_value("key", std::string_view(stored).substr(0, size)).has_value()) << size;
  }
  EXPECT_FALSE(unwrap_value("key", stored + '\0').has_value());
}

TEST(EnvelopeTest, ForeignVersionIsRejected) {
  std::string stored = wrap_value("key", "payload");
  stored[4] = 2;  // a well-formed envelope of another format version, checksum recomputed
  const std::size_t covered = stored.size() - kEnvelopeTrailerSize;
  const std::uint64_t sum = XXH3_64bits(stored.data(), covered);
  util::store_le(stored.data() + covered, sum, 8);
  EXPECT_FALSE(unwrap_value("key", stored).has_value());
  stored[4] = 1;  // back to version 1 with the checksum for version 2: checksum mismatch
  EXPECT_FALSE(unwrap_value("key", stored).has_value());
}

// ---- MemoryStore ----------------------------------------------------------------------------

TEST(MemoryStoreTest, PutGetEraseCountBytes) {
  MemoryStore store(1 << 20);
  EXPECT_FALSE(store.get("a").has_value());
  ASSERT_TRUE(store.put("a", "alpha").is_ok());
  ASSERT_TRUE(store.put("b", "be").is_ok());
  EXPECT_EQ(store.get("a"), "alpha");
  EXPECT_EQ(store.entry_count(), 2u);
  EXPECT_EQ(store.size_bytes(), 7u);  // value bytes only
  ASSERT_TRUE(store.put("a", "A").is_ok());
  EXPECT_EQ(store.get("a"), "A");
  EXPECT_EQ(store.entry_count(), 2u);
  EXPECT_EQ(store.size_bytes(), 3u);
  ASSERT_TRUE(store.erase("a").is_ok());
  ASSERT_TRUE(store.erase("absent").is_ok());
  EXPECT_FALSE(store.get("a").has_value());
  EXPECT_EQ(store.entry_count(), 1u);
  EXPECT_EQ(store.size_bytes(), 2u);
}

TEST(MemoryStoreTest, EvictsLeastRecentlyUsedFirst) {
  MemoryStore store(30);
  const std::string ten(10, 'v');
  ASSERT_TRUE(store.put("a", ten).is_ok());
  ASSERT_TRUE(store.put("b", ten).is_ok());
  ASSERT_TRUE(store.put("c", ten).is_ok());
  ASSERT_TRUE(store.get("a").has_value());  // a is now the most recent; b the least
  ASSERT_TRUE(store.put("d", ten).is_ok());
  EXPECT_FALSE(store.get("b").has_value());
  EXPECT_TRUE(store.get("a").has_value());
  EXPECT_TRUE(store.get("c").has_value());
  EXPECT_TRUE(store.get("d").has_value());
  // Order now (most recent first): d c a. A 20-byte value evicts a and c.
  ASSERT_TRUE(store.get("d").has_value());
  ASSERT_TRUE(store.put("e", std::string(20, 'w')).is_ok());
  EXPECT_FALSE(store.get("a").has_value());
  EXPECT_FALSE(store.get("c").has_value());
  EXPECT_TRUE(store.get("d").has_value());
  EXPECT_EQ(store.entry_count(), 2u);
  EXPECT_EQ(store.size_bytes(), 30u);
}

TEST(MemoryStoreTest, OversizedValueIsRejected) {
  MemoryStore store(10);
  ASSERT_TRUE(store.put("k", "small").is_ok());
  const Status status = store.put("k", std::string(11, 'x'));
  EXPECT_EQ(status.code(), Status::Code::kFull);
  EXPECT_EQ(store.get("k"), "small");  // the previous value is untouched
  EXPECT_TRUE(store.put("exact", std::string(10, 'x')).is_ok());  // exactly the cap fits
  EXPECT_EQ(store.entry_count(), 1u);
}

TEST(MemoryStoreTest, CountersAddUpAndClearResets) {
  MemoryStore store(1024);
  ASSERT_TRUE(store.add_counters({{"hits", 2}, {"misses", 1}}).is_ok());
  ASSERT_TRUE(store.add_counters({{"hits", 3}, {"bytes", -5}}).is_ok());
  EXPECT_EQ(store.counters(), (Counters{{"bytes", -5}, {"hits", 5}, {"misses", 1}}));
  ASSERT_TRUE(store.put("k", "v").is_ok());
  ASSERT_TRUE(store.clear().is_ok());
  EXPECT_TRUE(store.counters().empty());
  EXPECT_EQ(store.entry_count(), 0u);
  EXPECT_EQ(store.size_bytes(), 0u);
  EXPECT_FALSE(store.get("k").has_value());
}

TEST(MemoryStoreTest, ClosedStoreMissesAndFails) {
  MemoryStore store(1024);
  ASSERT_TRUE(store.put("k", "v").is_ok());
  store.close();
  EXPECT_FALSE(store.get("k").has_value());
  EXPECT_FALSE(store.put("k", "v").is_ok());
  EXPECT_FALSE(store.add_counters({{"x", 1}}).is_ok());
  EXPECT_FALSE(store.clear().is_ok());
  EXPECT_EQ(store.entry_count(), 0u);
}

TEST(MemoryStoreTest, ConcurrentPutAndGet) {
  MemoryStore store(64 * 1024);
  std::vector<std::thread> threads;
  std::atomic<int> wrong_values{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&store, &wrong_values, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string key = "k" + std::to_string((t * 7 + i) % 300);
        const std::string value = "value-of-" + key;
        if (!store.put(key, value).is_ok()) ++wrong_values;
        const auto got = store.get(key);
        if (got.has_value() && *got != value) ++wrong_values;
        if (i % 50 == 0) store.add_counters({{"ops", 1}});
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong_values.load(), 0);
  EXPECT_EQ(store.counters().at("ops"), 8 * 40);
  EXPECT_LE(store.size_bytes(), 64u * 1024u);
}

// ---- LmdbStore ------------------------------------------------------------------------------

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
      ::alarm(20);  // a deadlock fails the test instead of hanging it
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
  store->put("k", "v");
  store->get("k");
  store->get("absent");
  store->erase("k");
  store->add_counters({{"c", 1}});
  store->counters();
  store->entry_count();
  store->size_bytes();
  store->evict(EvictOptions{});
  store->map_usage();
  store->clear();
  store->close();
  store->get("k");
  store->evict(EvictOptions{});
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


// ---- LmdbStore: size cap, LRU eviction and touches ------------------------------------------

// The system Env with a clock the test moves, and puts that can be made to report MDB_MAP_FULL.
class TestEnv final : public Env {
 public:
  std::atomic<std::int64_t> now{1'000'000};
  std::atomic<int> map_full_puts{0};  // the next this-many put attempts report MDB_MAP_FULL
  std::atomic<int> disk_full_puts{0};  // then this many report ENOSPC

  void advance(std::int64_t seconds) { now += seconds; }

  std::int64_t now_seconds() override { return now.load(); }
  int fault_for(StoreOperation operation) override {
    if (operation != StoreOperation::kPut) return 0;
    for (int left = map_full_puts.load(); left > 0;) {
      if (map_full_puts.compare_exchange_weak(left, left - 1)) return MDB_MAP_FULL;
    }
    for (int left = disk_full_puts.load(); left > 0;) {
      if (disk_full_puts.compare_exchange_weak(left, left - 1)) return ENOSPC;
    }
    return 0;
  }
};

std::unique_ptr<LmdbStore> open_with_env(const std::string& directory, std::uint64_t map_size, Env* env) {
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
  ASSERT_TRUE(reopened->get("q1023").has_value());               // the 1024th
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

// ---- LmdbStore: threads, processes and crashes ----------------------------------------------

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
