// The cache directory removed under a live process (`rm -rf` of the cache while a notebook or a
// server runs, a cleaner emptying /tmp): the next store recreates it and reopens the store, once,
// said once, so the compiles after it are cached; every result stays NVRTC's.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(RemovedCache, ADirectoryRemovedUnderALiveProcessIsRecreatedAndHoldsTheCompilesAfterIt) {
  TempDir root;
  const std::string cache = root.path() + "/cache";
  const std::vector<int> rounds = {1, 2, 3, 4, 5};
  const ProcessResult direct = PacedProbe::reference(rounds);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  PacedProbe client(rounds, shim_env(cache));
  client.round(1);
  ASSERT_EQ(get(counters_of(cache), "stores"), 1) << "round 1 was not stored";
  std::filesystem::remove_all(cache);
  for (int n = 2; n <= 5; ++n) client.round(n);
  const ProcessResult r = client.finish();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == direct.out) << "a result differs from NVRTC's\n" << r.err;
  ASSERT_TRUE(std::filesystem::is_directory(cache + "/store")) << "not recreated\n" << r.err;
  EXPECT_EQ(get(counters_of(cache), "stores"), 4) << "the compiles after the removal were not stored\n" << r.err;
  EXPECT_EQ(occurrences(r.err, "was removed"), 1u) << r.err;
  EXPECT_EQ(r.err.find("No such file or directory: No such file or directory"), std::string::npos) << r.err;

  // A second process is served what the first stored after the removal.
  PacedProbe warm(rounds, shim_env(cache));
  for (int n : rounds) warm.round(n);
  const ProcessResult w = warm.finish();
  EXPECT_TRUE(w.out == direct.out) << w.err;
  EXPECT_EQ(get(counters_of(cache), "hits"), 4) << w.err;
}

}  // namespace
}  // namespace nvrtc_cache
