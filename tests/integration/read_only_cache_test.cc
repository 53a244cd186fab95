// A cache the user can read but not write — a prewarmed image's cache on a read-only mount — serves
// its hits and counts them where the user can write (store/read_only_counts.h): `stats`, inside the
// read-only view and outside it, shows them. The mount needs root (CI runs as root; the test fails
// there when it cannot mount).
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_testing.h"
#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

// `source` bind-mounted read-only at `target` for the test's lifetime.
class ReadOnlyView {
 public:
  ReadOnlyView(const std::string& source, const std::string& target) : target_(target) {
    std::filesystem::create_directories(target);
    mounted_ = ::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) == 0;
    if (mounted_ && ::mount(nullptr, target.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
      ::umount2(target.c_str(), MNT_DETACH);
      mounted_ = false;
    }
  }
  ~ReadOnlyView() {
    if (mounted_) ::umount2(target_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  std::string target_;
  bool mounted_ = false;
};

TEST(ReadOnlyCache, ABindMountedReadOnlyCacheCountsItsHits) {
  TempDir root;
  const std::string cache = root.path() + "/cache", view = root.path() + "/image-cache";
  const std::string runtime = root.path() + "/runtime";  // the user's own directories (XDG_RUNTIME_DIR)
  std::filesystem::create_directories(runtime);
  const std::vector<std::string> programs = {"trivial", "template"};
  const ProcessResult direct = probe(programs, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EnvVars writer = shim_env(cache);
  writer["XDG_RUNTIME_DIR"] = runtime;
  const ProcessResult cold = probe(programs, writer);
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  ASSERT_EQ(get(counters_of(cache), "stores"), 2) << cold.err;

  ReadOnlyView ro(cache, view);
  if (!ro.mounted()) {
    if (pypi_required()) FAIL() << "needs root to bind-mount the cache read-only";
    GTEST_SKIP() << "needs root to bind-mount the cache read-only";
  }
  EnvVars reader = shim_env(view);
  reader["XDG_RUNTIME_DIR"] = runtime;
  reader["NVRTC_CACHE_LOG"] = "debug";
  const ProcessResult warm = probe(programs, reader);
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_TRUE(warm.out == direct.out) << warm.err;
  ASSERT_NE(warm.err.find("is read-only"), std::string::npos) << "the view is not read-only: " << warm.err;
  EXPECT_NE(warm.err.find("counting in " + runtime + "/nvrtc-cache/read-only-counts/"), std::string::npos) << warm.err;

  // `stats` of the read-only view: 2 of 2 hits, and where they were counted.
  const EnvVars tool = {{"NVRTC_CACHE_DIR", view}, {"XDG_RUNTIME_DIR", runtime}};
  const nlohmann::json seen = nlohmann::json::parse(cli({"stats", "--json"}, tool).out);
  EXPECT_EQ(seen["hits"], 2) << seen.dump(2);
  // The cache's own counts (the writer's cold run) are shown with them.
  EXPECT_EQ(seen["misses"], 2) << seen.dump(2);
  EXPECT_EQ(seen["stores"], 2) << seen.dump(2);
  EXPECT_TRUE(seen["read_only"].get<bool>());
  EXPECT_TRUE(seen["counted_elsewhere"].is_string()) << seen.dump(2);
  const std::string human = cli({"stats"}, tool).out;
  EXPECT_NE(human.find("compiles (NVRTC)  2 hits, 2 misses"), std::string::npos) << human;
  EXPECT_NE(human.find("also counted in   " + runtime + "/nvrtc-cache/read-only-counts/"), std::string::npos) << human;

  // `stats -z` of the read-only view zeroes what it shows, though the cache itself cannot be written.
  ASSERT_EQ(cli({"stats", "-z"}, tool).exit_code, 0);
  const nlohmann::json zeroed = nlohmann::json::parse(cli({"stats", "--json"}, tool).out);
  EXPECT_EQ(zeroed["hits"], 0) << zeroed.dump(2);
  EXPECT_EQ(zeroed["stores"], 0) << zeroed.dump(2);
  EXPECT_FALSE(zeroed["zeroed_at"].is_null()) << zeroed.dump(2);
  const ProcessResult again = probe({"trivial"}, reader);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(cli({"stats", "--json"}, tool).out)["hits"], 1);
}

}  // namespace
}  // namespace nvrtc_cache
