// `nvrtc-cache evict`: arguments, and eviction of a cache filled by this process; `nvrtc-cache stats`
// counting the damaged stores moved aside.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "store/cache_directory.h"
#include "store/lmdb/lmdb_store.h"
#include "tests/support/process.h"

namespace nvrtc_cache {
namespace {

using testing::run_process;
using testing::TempDir;

TEST(Cli, EvictByAgeAndByPayloadSize) {
  TempDir dir;
  const std::map<std::string, std::optional<std::string>> env = {{"NVRTC_CACHE_DIR", dir.path()},
                                                                 {"NVRTC_CACHE_MAX_SIZE", "64M"}};
  {
    store::Status status;
    auto cache = store::LmdbStore::open({dir.path() + "/store", 64ull << 20}, &status);
    ASSERT_NE(cache, nullptr) << status.message();
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(cache->put("k" + std::to_string(i), std::string(100000, 'x')).is_ok());
  }
  const auto none_old = run_process({NVRTC_CACHE_CLI_PATH, "evict", "--older-than", "12h"}, env);
  EXPECT_EQ(none_old.exit_code, 0) << none_old.err;
  EXPECT_NE(none_old.out.find("evicted 0 entries"), std::string::npos) << none_old.out;
  EXPECT_NE(none_old.out.find("now 10 entries"), std::string::npos) << none_old.out;

  const auto trimmed = run_process({NVRTC_CACHE_CLI_PATH, "evict", "--max-size=300K"}, env);
  EXPECT_EQ(trimmed.exit_code, 0) << trimmed.err;
  EXPECT_NE(trimmed.out.find("evicted 7 entries (0.67 MiB)"), std::string::npos) << trimmed.out;
  EXPECT_NE(trimmed.out.find("now 3 entries, 0.29 MiB of payload"), std::string::npos) << trimmed.out;
  {  // the statistics count what every eviction removed
    store::Status status;
    auto cache = store::LmdbStore::open({dir.path() + "/store", 64ull << 20}, &status);
    ASSERT_NE(cache, nullptr) << status.message();
    const store::Counters counters = cache->counters();
    EXPECT_EQ(counters.count("evictions") ? counters.at("evictions") : 0, 7);
    EXPECT_EQ(counters.count("evicted_bytes") ? counters.at("evicted_bytes") : 0, 700000);
  }
  const auto stats = run_process({NVRTC_CACHE_CLI_PATH, "stats"}, env);
  EXPECT_NE(stats.out.find("evictions"), std::string::npos) << stats.out;

  const auto automatic = run_process({NVRTC_CACHE_CLI_PATH, "evict"}, env);  // far below 75%: nothing
  EXPECT_EQ(automatic.exit_code, 0) << automatic.err;
  EXPECT_NE(automatic.out.find("evicted 0 entries"), std::string::npos) << automatic.out;

  for (const char* bad : {"--older-than=3x", "--max-size=lots", "--older-than", "--bogus"}) {
    const auto refused = run_process({NVRTC_CACHE_CLI_PATH, "evict", bad}, env);
    EXPECT_EQ(refused.exit_code, 2) << bad;
    EXPECT_NE(refused.err.find("usage: nvrtc-cache evict"), std::string::npos) << refused.err;
  }
}

TEST(Cli, StatsCountsMovedAsideStores) {
  TempDir dir;
  const std::map<std::string, std::optional<std::string>> env = {{"NVRTC_CACHE_DIR", dir.path()}};
  store::CachePolicy policy;
  policy.directory = dir.path();
  policy.max_bytes = 16ull << 20;
  for (int round = 0; round < 3; ++round) {  // each round damages the store, which is moved aside
    {
      store::OpenedCache opened = store::open_cache(policy);
      ASSERT_TRUE(opened.store) << opened.status.message();
      for (int i = 0; i < 3; ++i) ASSERT_TRUE(opened.store->put("k" + std::to_string(i), std::string(20000, 'x')));
    }
    const std::string data = dir.path() + "/store/data.mdb";
    std::filesystem::resize_file(data, std::filesystem::file_size(data) / 2);
    const auto stats = run_process({NVRTC_CACHE_CLI_PATH, "stats", "--json"}, env);
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    EXPECT_NE(stats.err.find("moved aside to"), std::string::npos) << stats.err;
    const std::string expected = "\"moved_aside_stores\": " + std::to_string(std::min(round + 1, 2));
    EXPECT_NE(stats.out.find(expected), std::string::npos) << expected << " in " << stats.out;
  }
  const auto human = run_process({NVRTC_CACHE_CLI_PATH, "stats"}, env);
  EXPECT_NE(human.out.find("moved aside       2 damaged stores"), std::string::npos) << human.out;
}

}  // namespace
}  // namespace nvrtc_cache
