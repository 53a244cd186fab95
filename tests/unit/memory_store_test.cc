// Tests for MemoryStore (store/memory_store.h), the in-memory Store the remote-tier suites
// and the benchmarks use: LRU eviction, size cap, counters, threads.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "store/memory_store.h"

namespace nvrtc_cache::store {
namespace {

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
  EXPECT_EQ(store.get("k"), "small");                             // the previous value is untouched
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
        if (i % 50 == 0) (void)store.add_counters({{"ops", 1}});
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong_values.load(), 0);
  EXPECT_EQ(store.counters().at("ops"), 8 * 40);
  EXPECT_LE(store.size_bytes(), 64u * 1024u);
}

}  // namespace
}  // namespace nvrtc_cache::store
