// Shared tiers, in-process: the shared-directory tier on a real directory, the tiered store over it
// (read-through, write-back, write-behind, counters, the breaker, claims), and the tier check. URLs,
// secrets, seals, the breaker and write-behind alone: remote_tier_test.cc.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include <gtest/gtest.h>

#include "store/remote/breaker.h"
#include "store/remote/file_tier.h"
#include "store/remote/sealed_value.h"
#include "store/remote/secret.h"
#include "store/remote/tier_set.h"
#include "store/remote/tiered_store.h"
#include "store/remote/write_behind.h"
#include "store/memory_store.h"

namespace nvrtc_cache::store::remote {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "nvrtc-tier-XXXXXX").string();
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

// ---- File tier ----

struct FileTierFixture : ::testing::Test {
  void SetUp() override { dir = temp_dir(); }
  void TearDown() override { fs::remove_all(dir); }
  std::unique_ptr<Tier> tier(const std::string& attributes = "") {
    std::string problem;
    auto url = parse_tier_url("file://" + dir + attributes, &problem);
    EXPECT_TRUE(url) << problem;
    const TierOptions options = tier_options(*url, &problem);
    EXPECT_EQ(problem, "");
    return make_file_tier(*url, options, &problem);
  }
  Deadline soon() const { return Clock::now() + 5s; }
  std::string dir;
};

TEST_F(FileTierFixture, PutGetAndAtomicLayout) {
  auto t = tier();
  EXPECT_EQ(t->get("k", soon()).code, TierCode::kMiss);
  ASSERT_TRUE(t->put("k", "value-1", soon()).ok());
  const TierResult r = t->get("k", soon());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value, "value-1");
  ASSERT_TRUE(t->put("k", "value-2", soon()).ok());
  EXPECT_EQ(t->get("k", soon()).value, "value-2");
  const std::string file = dir + "/nvrtc-cache/" + file_tier_entry_name("k");
  EXPECT_TRUE(fs::is_regular_file(file));
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u);  // no temporaries left behind
  EXPECT_TRUE(t->check(soon()).ok());
  EXPECT_EQ(t->get("k", Clock::now() - 1ms).code, TierCode::kTimeout);
  EXPECT_EQ(t->put("k", "v", Clock::now() - 1ms).code, TierCode::kTimeout);
}

TEST_F(FileTierFixture, ReadOnlyRefusesWritesAndLinksAreNotFollowed) {
  ASSERT_TRUE(tier()->put("k", "v", soon()).ok());
  auto ro = tier("?read-only");
  EXPECT_FALSE(ro->writable());
  EXPECT_EQ(ro->put("k2", "v", soon()).code, TierCode::kRefused);
  EXPECT_EQ(ro->get("k", soon()).value, "v");
  const std::string file = dir + "/nvrtc-cache/" + file_tier_entry_name("link");
  fs::create_directories(fs::path(file).parent_path());
  fs::create_symlink(dir + "/nvrtc-cache/" + file_tier_entry_name("k"), file);
  EXPECT_EQ(ro->get("link", soon()).code, TierCode::kError);
}

TEST_F(FileTierFixture, AMissingDirectoryIsAMissToReadAndAnErrorToWrite) {
  std::string problem;
  auto url = parse_tier_url("file://" + dir + "/absent", &problem);
  auto t = make_file_tier(*url, tier_options(*url, &problem), &problem);
  EXPECT_EQ(t->get("k", soon()).code, TierCode::kMiss);
  EXPECT_EQ(t->put("k", "v", soon()).code, TierCode::kError);
  EXPECT_FALSE(t->check(soon()).ok());
  EXPECT_FALSE(fs::exists(dir + "/absent"));
}

TEST_F(FileTierFixture, EvictionRemovesTheOldestFirst) {
  auto t = tier();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(t->put("k" + std::to_string(i), std::string(1000, 'x'), soon()).ok());
    const std::string file = dir + "/nvrtc-cache/" + file_tier_entry_name("k" + std::to_string(i));
    const timespec times[2] = {{1'000'000 + i, 0}, {1'000'000 + i, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
  }
  const FileTierEviction e = evict_file_tier("file://" + dir, 4500);
  EXPECT_EQ(e.problem, "");
  EXPECT_EQ(e.files_before, 10u);
  EXPECT_EQ(e.bytes_before, 10000u);
  EXPECT_EQ(e.files_removed, 6u);
  EXPECT_EQ(e.bytes_after, 4000u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(t->get("k" + std::to_string(i), soon()).ok(), i >= 6) << i;
  EXPECT_NE(evict_file_tier("redis://h", 1).problem, "");
}

// ---- Tiered store ----

struct TieredFixture : FileTierFixture {
  std::unique_ptr<TieredStore> tiered(const std::string& attributes = "", const Secret* secret = nullptr) {
    std::vector<ConfiguredTier> tiers;
    std::string problem;
    auto url = parse_tier_url("file://" + dir + attributes, &problem);
    ConfiguredTier c;
    c.options = tier_options(*url, &problem);
    c.tier = make_file_tier(*url, c.options, &problem);
    tiers.push_back(std::move(c));
    auto local = std::make_unique<MemoryStore>(1 << 30);
    return std::make_unique<TieredStore>(
        std::move(local), std::move(tiers), secret ? std::optional<Secret>(*secret) : std::nullopt,
        [this](std::string_view, std::string_view m) { logged.emplace_back(m); }, writer);
  }
  std::int64_t counter(TieredStore& s, TierCounter c) {
    (void)s.add_counters({});
    const Counters all = s.counters();
    const auto it = all.find(tier_counter_name(0, c));
    return it == all.end() ? 0 : it->second;
  }
  WriteBehind writer{WriteBehind::Limits{}};
  std::vector<std::string> logged;
};

TEST_F(TieredFixture, WriteBehindThenReadThroughThenLocal) {
  auto a = tiered();
  ASSERT_TRUE(a->put("key", "payload"));
  ASSERT_TRUE(a->flush(5s));
  EXPECT_EQ(counter(*a, TierCounter::writes), 1);
  auto b = tiered();  // another node: its own local store, the same tier
  EXPECT_EQ(b->local().get("key"), std::nullopt);
  EXPECT_EQ(b->get("key"), "payload");
  EXPECT_EQ(counter(*b, TierCounter::hits), 1);
  EXPECT_EQ(b->local().get("key"), "payload");  // written back
  fs::remove_all(dir + "/nvrtc-cache");
  EXPECT_EQ(b->get("key"), "payload");  // now local
  EXPECT_EQ(counter(*b, TierCounter::hits), 1);
  {
    const SharedLookups local_only(false);
    EXPECT_EQ(b->get("other"), std::nullopt);
  }
  EXPECT_EQ(counter(*b, TierCounter::misses), 0);
  EXPECT_EQ(b->get("other"), std::nullopt);
  EXPECT_EQ(counter(*b, TierCounter::misses), 1);
}

TEST_F(TieredFixture, GarbageAndForeignValuesAreCountedMisses) {
  auto a = tiered();
  auto t = tier();
  ASSERT_TRUE(t->put("garbage", "not sealed at all", soon()).ok());
  ASSERT_TRUE(t->put("moved", seal_value("another key", "v", nullptr), soon()).ok());
  std::string truncated = seal_value("truncated", std::string(100, 'v'), nullptr);
  truncated.resize(60);
  ASSERT_TRUE(t->put("truncated", truncated, soon()).ok());
  EXPECT_EQ(a->get("garbage"), std::nullopt);
  EXPECT_EQ(a->get("moved"), std::nullopt);
  EXPECT_EQ(a->get("truncated"), std::nullopt);
  EXPECT_EQ(counter(*a, TierCounter::corrupt), 3);
  EXPECT_EQ(a->local().get("garbage"), std::nullopt);
  // The next write replaces the bad value.
  ASSERT_TRUE(a->put("garbage", "good"));
  ASSERT_TRUE(a->flush(5s));
  auto b = tiered();
  EXPECT_EQ(b->get("garbage"), "good");
}

TEST_F(TieredFixture, WithASecretUnsignedValuesAreRefusedAndCounted) {
  const Secret secret = secret_from_bytes("s3cret");
  auto unsigned_writer = tiered();
  ASSERT_TRUE(unsigned_writer->put("k", "v"));
  ASSERT_TRUE(unsigned_writer->flush(5s));
  auto reader = tiered("", &secret);
  EXPECT_EQ(reader->get("k"), std::nullopt);
  EXPECT_EQ(counter(*reader, TierCounter::mac_rejected), 1);
  ASSERT_TRUE(reader->put("k", "signed"));
  ASSERT_TRUE(reader->flush(5s));
  auto other_reader = tiered("", &secret);
  EXPECT_EQ(other_reader->get("k"), "signed");
  for (const auto& m : logged) EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
}

TEST_F(TieredFixture, ReadOnlyAndOversizedValuesAreNotWritten) {
  auto ro = tiered("?read-only");
  ASSERT_TRUE(ro->put("k", "v"));
  ASSERT_TRUE(ro->flush(5s));
  EXPECT_FALSE(fs::exists(dir + "/nvrtc-cache"));
  auto small = tiered("?max-entry-size=1K");
  ASSERT_TRUE(small->put("big", std::string(2000, 'b')));
  ASSERT_TRUE(small->flush(5s));
  EXPECT_EQ(counter(*small, TierCounter::write_drops), 1);
  EXPECT_FALSE(fs::exists(dir + "/nvrtc-cache"));
  EXPECT_EQ(small->get("big"), std::string(2000, 'b'));  // local
}

TEST_F(TieredFixture, AFailingTierOpensItsBreakerAndIsSkipped) {
  fs::remove_all(dir);
  std::ofstream(dir) << "a file, not a directory";
  auto s = tiered();
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(s->put("k" + std::to_string(i), "v"));
  ASSERT_TRUE(s->flush(5s));
  EXPECT_EQ(counter(*s, TierCounter::errors), Breaker::kFailuresToOpen);
  EXPECT_EQ(counter(*s, TierCounter::skipped), 6 - Breaker::kFailuresToOpen);
  EXPECT_EQ(counter(*s, TierCounter::breaker_opened), 1);
  EXPECT_EQ(s->tier_status()[0].breaker, BreakerState::kOpen);
  EXPECT_EQ(s->get("k0"), "v");  // local
  EXPECT_FALSE(logged.empty());
  fs::remove(dir);
  fs::create_directory(dir);
}

TEST_F(TieredFixture, ClaimsAreUnsupportedOnADirectory) {
  auto s = tiered();
  EXPECT_EQ(s->try_claim("abc", 1000ms).code(), ClaimCode::kUnsupported);
}

// A shared directory that also takes claims (kept in memory), standing in for a tier with
// SET NX PX, to check the tiered store's side of cross-node claims.
class ClaimingTier final : public Tier {
 public:
  ClaimingTier(std::unique_ptr<Tier> files, std::vector<std::string>* events)
      : files_(std::move(files)), events_(events) {}
  const std::string& display_name() const override { return files_->display_name(); }
  bool writable() const override { return true; }
  TierResult get(std::string_view key, Deadline deadline) override { return files_->get(key, deadline); }
  TierResult put(std::string_view key, std::string_view value, Deadline deadline) override {
    record("put " + std::string(key));
    return files_->put(key, value, deadline);
  }
  ClaimCode try_claim(std::string_view key, std::string_view token, std::chrono::milliseconds, Deadline,
                      TierResult*) override {
    std::lock_guard lock(mu_);
    return claims_.emplace(key, token).second ? ClaimCode::kClaimed : ClaimCode::kHeldByOther;
  }
  std::optional<ClaimHolder> claim_holder(std::string_view key, Deadline) override {
    std::lock_guard lock(mu_);
    const auto it = claims_.find(key);
    if (it == claims_.end()) return std::nullopt;
    return ClaimHolder{it->second, std::chrono::milliseconds(1000)};
  }
  bool renew_claim(std::string_view key, std::string_view token, std::chrono::milliseconds, Deadline) override {
    std::lock_guard lock(mu_);
    const auto it = claims_.find(key);
    return it != claims_.end() && it->second == token;
  }
  void release_claim(std::string_view key, std::string_view token, Deadline) override {
    record("release " + std::string(key));
    std::lock_guard lock(mu_);
    if (auto it = claims_.find(std::string(key)); it != claims_.end() && it->second == token) claims_.erase(it);
  }
  TierResult check(Deadline deadline) override { return files_->check(deadline); }

 private:
  void record(std::string event) {
    std::lock_guard lock(mu_);
    events_->push_back(std::move(event));
  }
  std::unique_ptr<Tier> files_;
  std::vector<std::string>* events_;
  std::mutex mu_;
  std::map<std::string, std::string, std::less<>> claims_;
};

TEST_F(TieredFixture, ACrossNodeClaimIsReleasedAfterTheWritesQueuedBeforeIt) {
  std::vector<std::string> events;
  std::string problem;
  auto url = parse_tier_url("file://" + dir + "?prefix=p", &problem);
  std::vector<ConfiguredTier> tiers;
  tiers.push_back(
      {std::make_unique<ClaimingTier>(make_file_tier(*url, tier_options(*url, &problem), &problem), &events),
       tier_options(*url, &problem)});
  TieredStore node(std::make_unique<MemoryStore>(1 << 20), std::move(tiers), std::nullopt, {}, writer);
  RemoteClaim claim = node.try_claim("abc", 1000ms);
  ASSERT_TRUE(claim.held());
  EXPECT_EQ(node.try_claim("abc", 1000ms).code(), ClaimCode::kHeldByOther);  // another compile, anywhere
  ASSERT_TRUE(node.put("k", "v"));
  claim.release();
  EXPECT_FALSE(claim.held());
  ASSERT_TRUE(node.flush(5s));
  EXPECT_EQ(events, (std::vector<std::string>{"put k", "release p:claim:abc"}));
  RemoteClaim next = node.try_claim("abc", 1000ms);
  EXPECT_TRUE(next.held()) << "the claim was not released";
  next.release();
  ASSERT_TRUE(node.flush(5s));  // before `events` goes
}

TEST(TierCheck, ReportsReachabilityAndWritability) {
  const std::string dir = temp_dir();
  std::vector<std::string> problems;
  const auto checks =
      check_tiers("file://" + dir + " file://" + dir + "?read-only file://" + dir + "/absent", "", &problems);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_TRUE(checks[0].reachable);
  EXPECT_TRUE(checks[0].writable);
  EXPECT_EQ(checks[0].message, "");
  EXPECT_GE(checks[0].round_trip_ms, 0);
  EXPECT_TRUE(checks[1].reachable);
  EXPECT_FALSE(checks[1].writable);
  EXPECT_EQ(checks[1].message, "read-only");
  EXPECT_FALSE(checks[2].reachable);
  EXPECT_NE(checks[2].message, "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
