// Tests for the growing map (store/lmdb/map_growth.h), as Windows uses it, here on Linux's LMDB: a
// store opened with a small initial map grows it as puts fill it (readers on other threads
// meanwhile), never past the cap and without evicting, reopens no smaller than its file, and another
// process that opened the store before it grew keeps reading and writing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "store/lmdb/lmdb_store.h"
#include "store/lmdb/map_growth.h"
#include "tests/support/store_fixtures.h"

namespace nvrtc_cache::store {
namespace {

using lmdb::kMapGrowthStepBytes;
using lmdb::next_map_bytes;
using testing::binary_value;
using testing::TempDir;

constexpr std::uint64_t kMiB = 1ull << 20;

std::unique_ptr<LmdbStore> open_growing(const std::string& directory, std::uint64_t cap = 256 * kMiB) {
  LmdbOptions options{directory, cap};
  options.initial_map_bytes = kMapGrowthStepBytes;
  Status status;
  auto store = LmdbStore::open(options, &status);
  EXPECT_TRUE(status.is_ok()) << status.message();
  return store;
}

std::string key_of(int i) { return "entry-" + std::to_string(i); }
std::string value_of(int i) { return binary_value(200 * 1024 + static_cast<std::size_t>(i), static_cast<unsigned>(i)); }

TEST(LmdbMapGrowthTest, StepsAreAQuarterOfTheMapWithinBoundsAndNeverPassTheCap) {
  EXPECT_EQ(next_map_bytes(kMiB, 0, 1024 * kMiB), 2 * kMiB);           // at least the smallest step
  EXPECT_EQ(next_map_bytes(16 * kMiB, 0, 1024 * kMiB), 20 * kMiB);     // a quarter
  EXPECT_EQ(next_map_bytes(1024 * kMiB, 0, 4096 * kMiB), 1088 * kMiB);  // at most 64 MiB
  EXPECT_EQ(next_map_bytes(kMiB, 3 * kMiB, 1024 * kMiB), 7 * kMiB);    // twice a large record
  EXPECT_EQ(next_map_bytes(10 * kMiB, 0, 11 * kMiB), 11 * kMiB);       // the cap
  EXPECT_EQ(next_map_bytes(kMiB + 1, 0, 1024 * kMiB), 3 * kMiB);       // rounded up to a step
}

TEST(LmdbMapGrowthTest, GrowsAsPutsFillItWhileOtherThreadsRead) {
  TempDir tmp;
  auto store = open_growing(tmp.sub("store"));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put(key_of(0), value_of(0)).is_ok());
  const MapUsage first = store->map_usage();
  EXPECT_EQ(first.map_bytes, 256 * kMiB);
  EXPECT_EQ(first.mapped_bytes, kMapGrowthStepBytes);
  // Readers on other threads, each read in its own transaction, while the writer grows the map.
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0}, reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      while (!done.load()) {
        if (store->get(key_of(0)) != value_of(0)) ++wrong;
        ++reads;
      }
    });
  }
  constexpr int kEntries = 60;  // about 12 MiB
  for (int i = 1; i < kEntries; ++i) ASSERT_TRUE(store->put(key_of(i), value_of(i)).is_ok()) << i;
  done = true;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(store->entry_count(), static_cast<std::uint64_t>(kEntries)) << "evicted instead of growing";
  for (int i = 0; i < kEntries; ++i) EXPECT_EQ(store->get(key_of(i)), value_of(i)) << i;
  const MapUsage grown = store->map_usage();
  EXPECT_GT(grown.mapped_bytes, 12 * kMiB);
  EXPECT_LE(grown.mapped_bytes, grown.used_bytes + grown.used_bytes / 4 + 2 * kMiB) << "more than one step";
  EXPECT_EQ(grown.map_bytes, 256 * kMiB);
}

TEST(LmdbMapGrowthTest, StopsAtTheCapAndEvicts) {
  TempDir tmp;
  auto store = open_growing(tmp.sub("store"), 8 * kMiB);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(store->put(key_of(i), value_of(i)).is_ok()) << i;
  const MapUsage usage = store->map_usage();
  // Grown from its first MiB, never past the cap: eviction (which keeps the data under the cap, with
  // room to spare) takes over before or when the map reaches it.
  EXPECT_GT(usage.mapped_bytes, 4 * kMiB);
  EXPECT_LE(usage.mapped_bytes, 8 * kMiB);
  EXPECT_LT(store->entry_count(), 60u);
  EXPECT_EQ(store->get(key_of(59)), value_of(59));
}

TEST(LmdbMapGrowthTest, ReopensNoSmallerThanItsFile) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  {
    auto store = open_growing(directory);
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 30; ++i) ASSERT_TRUE(store->put(key_of(i), value_of(i)).is_ok()) << i;
    store->close();
  }
  const std::uint64_t file = std::filesystem::file_size(directory + "/data.mdb");
  ASSERT_GT(file, kMapGrowthStepBytes);
  auto reopened = open_growing(directory);
  ASSERT_NE(reopened, nullptr);
  EXPECT_GE(reopened->map_usage().mapped_bytes, file);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(reopened->get(key_of(i)), value_of(i)) << i;
}

// The parent opens the store small; a child process (its own environment) fills it past the
// parent's map; the parent then reads every entry (adopting the grown map) and writes more.
TEST(LmdbMapGrowthTest, AnotherProcessThatOpenedBeforeTheGrowthKeepsWorking) {
  TempDir tmp;
  const std::string directory = tmp.sub("store");
  auto store = open_growing(directory);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->put(key_of(0), value_of(0)).is_ok());
  ASSERT_EQ(store->map_usage().mapped_bytes, kMapGrowthStepBytes);
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto child = open_growing(directory);  // the inherited environment is never used in a child
    if (child == nullptr) ::_exit(1);
    for (int i = 1; i < 30; ++i) {
      if (!child->put(key_of(i), value_of(i)).is_ok()) ::_exit(2);
    }
    ::_exit(child->map_usage().mapped_bytes > 4 * kMiB ? 0 : 3);
  }
  ASSERT_GT(pid, 0);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << wstatus;
  for (int i = 0; i < 30; ++i) EXPECT_EQ(store->get(key_of(i)), value_of(i)) << i;
  for (int i = 30; i < 40; ++i) ASSERT_TRUE(store->put(key_of(i), value_of(i)).is_ok()) << i;
  EXPECT_EQ(store->entry_count(), 40u);
  EXPECT_GT(store->map_usage().mapped_bytes, 4 * kMiB);
}

}  // namespace
}  // namespace nvrtc_cache::store
