// The file:// tier's handle discipline, on real directories and real symbolic links: a bucket or
// the tier's <prefix> that is a link is never followed (no write lands in the linked directory, no
// read comes from it, eviction deletes nothing in it), eviction removes only regular files of the
// tier's own names, temporary files are new files of random names (a planted link is left alone),
// and directories of other owners are accepted only where the directory holding them admits other
// writers.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store/remote/file_tier.h"
#include "store/remote/tier.h"
#include "store/remote/tier_directory.h"

namespace nvrtc_cache::store::remote {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every name under `dir`, links included (not followed).
std::set<std::string> names_under(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

struct FileTierWalk : ::testing::Test {
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "nvrtc-tier-walk-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    top = pattern;
    tier_dir = top + "/tier";
    victim = top + "/victim";
    fs::create_directories(tier_dir);
    fs::create_directories(victim);
    std::ofstream(victim + "/documents.txt") << "the victim's own file";
  }
  void TearDown() override { fs::remove_all(top); }

  std::unique_ptr<Tier> tier() {
    std::string problem;
    auto url = parse_tier_url("file://" + tier_dir, &problem);
    EXPECT_TRUE(url) << problem;
    return make_file_tier(*url, tier_options(*url, &problem), &problem);
  }
  static Deadline soon() { return Clock::now() + 5s; }
  std::string bucket_of(const std::string& key) const {
    return tier_dir + "/nvrtc-cache/" + file_tier_entry_name(key).substr(0, 2);
  }
  // Keys whose entries fall in pairwise different buckets.
  static std::vector<std::string> keys_in_distinct_buckets(int count) {
    std::vector<std::string> keys;
    std::set<std::string> buckets;
    for (int i = 0; static_cast<int>(keys.size()) < count; ++i) {
      const std::string key = "key-" + std::to_string(i);
      if (buckets.insert(file_tier_entry_name(key).substr(0, 2)).second) keys.push_back(key);
    }
    return keys;
  }

  std::string top, tier_dir, victim;
};

TEST_F(FileTierWalk, ALinkedBucketIsSkippedByEvictionAndItsTargetLeftAlone) {
  auto t = tier();
  const std::vector<std::string> keys = keys_in_distinct_buckets(4);
  for (const std::string& key : keys) ASSERT_TRUE(t->put(key, std::string(100, 'x'), soon()).ok());
  // A bucket none of the keys uses, linked to the victim's directory, which also holds a file named
  // like an entry of that bucket.
  std::string linked;
  for (int b = 0; b < 256 && linked.empty(); ++b) {
    char name[16];
    std::snprintf(name, sizeof name, "%02x", b);
    if (!fs::exists(tier_dir + "/nvrtc-cache/" + name)) linked = name;
  }
  const std::string lookalike = linked + std::string(30, 'a');
  std::ofstream(victim + "/" + lookalike) << "also the victim's";
  fs::create_directory_symlink(victim, tier_dir + "/nvrtc-cache/" + linked);

  const FileTierEviction e = evict_file_tier("file://" + tier_dir, 1);
  EXPECT_EQ(e.problem, "");
  EXPECT_EQ(e.files_before, keys.size());
  EXPECT_EQ(e.files_removed, keys.size()) << "eviction removed nothing of the tier's own";
  EXPECT_EQ(e.bytes_after, 0u);
  EXPECT_EQ(e.buckets_skipped, 1u);
  EXPECT_NE(e.first_skipped.find("/nvrtc-cache/" + linked + " is a symbolic link"), std::string::npos)
      << e.first_skipped;
  EXPECT_EQ(read(victim + "/documents.txt"), "the victim's own file");
  EXPECT_EQ(read(victim + "/" + lookalike), "also the victim's");
  EXPECT_TRUE(fs::is_symlink(tier_dir + "/nvrtc-cache/" + linked));
  for (const std::string& key : keys) EXPECT_EQ(t->get(key, soon()).code, TierCode::kMiss);
}

TEST_F(FileTierWalk, EvictionRemovesOnlyRegularFilesOfTheTiersOwnNames) {
  auto t = tier();
  ASSERT_TRUE(t->put("k", std::string(100, 'x'), soon()).ok());
  const std::string bucket = bucket_of("k");
  const std::string b = fs::path(bucket).filename().string();
  const std::string other_bucket = b == "00" ? "01" : "00";
  // Not the tier's: a note, an entry-like name of another bucket, upper-case hex, a name too long,
  // a temporary-like name that is not one, and a link named like an entry.
  const std::vector<std::string> foreign = {"notes.txt", other_bucket + std::string(30, 'a'), b + std::string(30, 'A'),
                                            b + std::string(31, 'a'), ".tmp-" + b + std::string(30, 'a') + "-x"};
  for (const std::string& name : foreign) std::ofstream(bucket + "/" + name) << "keep";
  const std::string link_name = b + std::string(30, 'e');
  fs::create_symlink(victim + "/documents.txt", bucket + "/" + link_name);
  // Old enough to be abandoned, in both temporary forms.
  const std::vector<std::string> temporaries = {".tmp-" + b + std::string(30, 'c') + "-0123456789abcdef",
                                                ".tmp-" + b + std::string(30, 'd') + "-41-7-123456"};
  for (const std::string& name : temporaries) {
    std::ofstream(bucket + "/" + name) << "partial";
    const timespec times[2] = {{1'000'000, 0}, {1'000'000, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (bucket + "/" + name).c_str(), times, 0), 0);
  }

  const FileTierEviction e = evict_file_tier("file://" + tier_dir, 1);
  EXPECT_EQ(e.problem, "");
  EXPECT_EQ(e.files_before, 1u);
  EXPECT_EQ(e.files_removed, 1u);
  EXPECT_EQ(e.temporaries_removed, 2u);
  EXPECT_EQ(e.buckets_skipped, 0u);
  EXPECT_EQ(t->get("k", soon()).code, TierCode::kMiss);
  for (const std::string& name : foreign) EXPECT_EQ(read(bucket + "/" + name), "keep") << name;
  EXPECT_TRUE(fs::is_symlink(bucket + "/" + link_name));
  EXPECT_EQ(read(victim + "/documents.txt"), "the victim's own file");
  for (const std::string& name : temporaries) EXPECT_FALSE(fs::exists(bucket + "/" + name)) << name;
}

TEST_F(FileTierWalk, WritesThroughLinkedBucketsCreateNothingInTheTarget) {
  const std::string attacker = top + "/attacker";
  fs::create_directories(attacker);
  fs::create_directories(tier_dir + "/nvrtc-cache");
  for (int b = 0; b < 256; ++b) {
    char name[16];
    std::snprintf(name, sizeof name, "%02x", b);
    fs::create_directory_symlink(attacker, tier_dir + "/nvrtc-cache/" + name);
  }
  // A value planted where a followed link would find the entry of "k".
  std::ofstream(attacker + "/" + file_tier_entry_name("k").substr(3)) << "planted";
  const std::set<std::string> before = names_under(attacker);
  auto t = tier();
  for (int i = 0; i < 32; ++i) {
    const TierResult put = t->put("key-" + std::to_string(i), "value", soon());
    EXPECT_EQ(put.code, TierCode::kRefused) << put.detail;
    EXPECT_NE(put.detail.find("is a symbolic link (not followed)"), std::string::npos) << put.detail;
  }
  EXPECT_EQ(t->get("k", soon()).code, TierCode::kRefused);
  int visited = 0;
  EXPECT_TRUE(t->for_each_value([&](std::string_view, std::int64_t) { return ++visited, true; }, soon()).ok());
  EXPECT_EQ(visited, 0);
  EXPECT_FALSE(t->check(soon()).ok());
  EXPECT_EQ(names_under(attacker), before);
  EXPECT_EQ(read(attacker + "/" + file_tier_entry_name("k").substr(3)), "planted");
}

TEST_F(FileTierWalk, ALinkedPrefixIsNeverFollowed) {
  fs::create_directory_symlink(victim, tier_dir + "/nvrtc-cache");
  const std::string lookalike_bucket = victim + "/ab";
  fs::create_directories(lookalike_bucket);
  std::ofstream(lookalike_bucket + "/ab" + std::string(30, '0')) << "the victim's";
  const std::set<std::string> before = names_under(victim);
  auto t = tier();
  EXPECT_EQ(t->put("k", "value", soon()).code, TierCode::kRefused);
  const FileTierEviction e = evict_file_tier("file://" + tier_dir, 1);
  EXPECT_NE(e.problem.find("is a symbolic link"), std::string::npos) << e.problem;
  EXPECT_EQ(e.files_removed, 0u);
  EXPECT_EQ(names_under(victim), before);
}

TEST_F(FileTierWalk, TemporaryFilesAreNewFilesOfRandomNames) {
  auto t = tier();
  ASSERT_TRUE(t->put("k", "first", soon()).ok());
  const std::string bucket = bucket_of("k");
  const std::string digits = file_tier_entry_name("k").substr(3);
  // Links at the names earlier versions would have used (pid, sequence, clock), and at names of this
  // version's form: a write must not open any of them.
  std::vector<std::string> planted;
  for (int sequence = 0; sequence < 64; ++sequence) {
    planted.push_back(".tmp-" + digits + "-" + std::to_string(::getpid()) + "-" + std::to_string(sequence) + "-0");
  }
  for (int i = 0; i < 16; ++i) planted.push_back(temporary_name(digits));
  for (const std::string& name : planted) fs::create_symlink(victim + "/documents.txt", bucket + "/" + name);
  for (int i = 0; i < 64; ++i) ASSERT_TRUE(t->put("k", "value " + std::to_string(i), soon()).ok());
  EXPECT_EQ(t->get("k", soon()).value, "value 63");
  EXPECT_EQ(read(victim + "/documents.txt"), "the victim's own file");
  for (const std::string& name : planted) EXPECT_TRUE(fs::is_symlink(bucket + "/" + name)) << name;
  std::set<std::string> expected(planted.begin(), planted.end());
  expected.insert(digits);
  std::set<std::string> present;
  for (const auto& e : fs::directory_iterator(bucket)) present.insert(e.path().filename().string());
  EXPECT_EQ(present, expected) << "a temporary file was left behind";
}

TEST(TierNames, EntriesAndTemporaries) {
  const std::string digits = file_tier_entry_name("k").substr(3);
  const std::string b = digits.substr(0, 2);
  EXPECT_EQ(file_tier_entry_name("k"), b + "/" + digits);
  EXPECT_TRUE(is_bucket_name(b));
  EXPECT_FALSE(is_bucket_name("AB"));
  EXPECT_FALSE(is_bucket_name("abc"));
  EXPECT_TRUE(is_entry_name(digits, b));
  EXPECT_FALSE(is_entry_name(digits, b == "00" ? "01" : "00"));
  EXPECT_FALSE(is_entry_name(digits + "0", b));
  const std::string temporary = temporary_name(digits);
  EXPECT_TRUE(is_temporary_name(temporary, b)) << temporary;
  EXPECT_FALSE(is_entry_name(temporary, b));
  EXPECT_NE(temporary_name(digits), temporary);
  EXPECT_TRUE(is_temporary_name(".tmp-" + digits + "-12-0-999", b));
  for (const std::string& not_temporary :
       {".tmp-" + digits, ".tmp-" + digits + "-", ".tmp-" + digits + "-1-2", ".tmp-" + digits + "-1-2-3-4",
        ".tmp-" + digits + "-0123456789ABCDEF", ".tmp-" + digits + "-1--3", std::string(".tmp-x-1-2-3"),
        "tmp-" + digits + "-1-2-3"}) {
    EXPECT_FALSE(is_temporary_name(not_temporary, b)) << not_temporary;
  }
}

// A directory of another owner: refused where the directory holding it admits no other writers,
// accepted in a tier shared by group (or everyone), as a shared tier's buckets are.
TEST_F(FileTierWalk, ABucketOfAnotherOwnerIsTheTiersOwnOnlyWhereOthersMayWrite) {
  if (::geteuid() != 0) {
    const char* required = std::getenv("NVRTC_CACHE_REQUIRE_PYPI");
    if (required != nullptr && std::string(required) == "1")
      FAIL() << "required: needs root to give a directory to another user";
    GTEST_SKIP() << "needs root to give a directory to another user";
  }
  auto t = tier();
  ASSERT_TRUE(t->put("k", "value", soon()).ok());
  const std::string root = tier_dir + "/nvrtc-cache";
  const std::string bucket = bucket_of("k");
  ASSERT_EQ(::chown(bucket.c_str(), 12345, 12345), 0);
  ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
  const TierResult refused = t->get("k", soon());
  EXPECT_EQ(refused.code, TierCode::kRefused);
  EXPECT_NE(refused.detail.find("owned by another user"), std::string::npos) << refused.detail;
  const FileTierEviction skipped = evict_file_tier("file://" + tier_dir, 1);
  EXPECT_EQ(skipped.buckets_skipped, 1u);
  EXPECT_EQ(skipped.files_removed, 0u);
  EXPECT_TRUE(fs::exists(bucket + "/" + file_tier_entry_name("k").substr(3)));

  ASSERT_EQ(::chmod(root.c_str(), 02775), 0);  // shared with a group
  EXPECT_EQ(t->get("k", soon()).value, "value");
  ASSERT_TRUE(t->put("k", "value 2", soon()).ok());
  const FileTierEviction evicted = evict_file_tier("file://" + tier_dir, 1);
  EXPECT_EQ(evicted.buckets_skipped, 0u);
  EXPECT_EQ(evicted.files_removed, 1u);
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
