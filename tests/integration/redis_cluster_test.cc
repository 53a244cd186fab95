// The Redis tier against a real Redis Cluster of 6 redis-server processes (3 masters, 3 replicas;
// tests/support/redis_cluster.h), seeded by one node: exact round trips spread over every master
// (and from 16 threads starting a fresh tier together), a value and its claim in one slot, `remote check`, a slot
// migrated during the run (-ASK followed, then -MOVED), and a master killed mid-run (each operation waits at most its
// timeout, nothing wrong is read, and the replica that takes over serves every key), reads from replicas when asked
// (read-from=replica). Also the slot and CLUSTER NODES
// parsing (store/remote/redis/cluster_map.h) on the specification's examples.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "store/remote/redis/cluster_map.h"
#include "store/remote/tier.h"
#include "tests/support/redis_cluster.h"
#include "tests/support/redis_tier_testing.h"

namespace nvrtc_cache::store::remote {
namespace {

using namespace std::chrono_literals;
using namespace redis_tier_testing;
using redis::Reply;
using testing::RedisCluster;

std::unique_ptr<Tier> cluster_tier(const RedisCluster& cluster, const std::string& attributes = "") {
  std::string problem;
  auto url = parse_tier_url(cluster.url() + attributes, &problem);
  EXPECT_TRUE(url.has_value()) << problem;
  if (!url) return nullptr;
  const TierOptions options = tier_options(*url, &problem);
  EXPECT_EQ(problem, "");
  return make(*url, options);
}

std::uint16_t slot_of(const std::string& key) { return redis::key_slot("nvrtc-cache:v1:{" + hex(key) + "}"); }

TEST(ClusterMap, SlotsAndRepliesAsTheSpecificationGivesThem) {
  EXPECT_EQ(redis::key_slot("123456789"), 12739);  // CRC16/XMODEM check value 0x31C3 mod 16384
  EXPECT_EQ(redis::key_slot("{user1000}.following"), redis::key_slot("{user1000}.followers"));
  EXPECT_EQ(redis::key_slot("foo{}{bar}"), redis::key_slot("foo{}{bar}"));  // empty tag: the whole key
  EXPECT_NE(redis::key_slot("foo{}{bar}"), redis::key_slot("bar"));
  EXPECT_EQ(redis::key_slot("foo{{bar}}zap"), redis::key_slot("{bar"));
  const auto nodes = redis::parse_cluster_nodes(
      "07c3 127.0.0.1:30004@31004 slave e7d1 0 1426238317239 4 connected\n"
      "67ed 127.0.0.1:30002@31002,host.lan master - 0 1426238316232 2 connected 5461-10922\n"
      "2928 :30001@31001 myself,master - 0 0 1 connected 0-5460 [5461->-67ed]\n"
      "e7d1 127.0.0.1:30003@31003 master,fail - 0 1426238318243 3 connected 10923-16383\n",
      "10.0.0.9");
  ASSERT_TRUE(nodes.has_value());
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_FALSE((*nodes)[0].master);
  EXPECT_EQ((*nodes)[1].port, 30002);
  EXPECT_EQ((*nodes)[1].slots, (std::vector<std::pair<std::uint16_t, std::uint16_t>>{{5461, 10922}}));
  EXPECT_EQ((*nodes)[2].host, "10.0.0.9");
  EXPECT_EQ((*nodes)[2].slots.size(), 1u) << "a migration marker is not a slot";
  EXPECT_TRUE((*nodes)[3].failed);
  EXPECT_FALSE(redis::parse_cluster_nodes("garbage\n", "h").has_value());
  EXPECT_FALSE(redis::parse_cluster_nodes("a 1.2.3.4:5@6 master - 0 0 1 connected 9-99999\n", "h").has_value());
  const auto moved = redis::parse_redirect("MOVED 3999 127.0.0.1:6381");
  ASSERT_TRUE(moved.has_value());
  EXPECT_TRUE(moved->moved);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->host, "127.0.0.1");
  EXPECT_EQ(moved->port, 6381);
  const auto ask = redis::parse_redirect("ASK 1 :6380");
  ASSERT_TRUE(ask.has_value());
  EXPECT_FALSE(ask->moved);
  EXPECT_EQ(ask->host, "");
  EXPECT_FALSE(redis::parse_redirect("MOVED 16384 h:1").has_value());
  EXPECT_FALSE(redis::parse_redirect("ERR MOVED").has_value());
}

// A hostile node's map is refused in time linear in its size: a slot listed twice, more nodes than
// the router holds, more than kMaxClusterNodesReply bytes.
TEST(ClusterMap, AMapBeyondItsBoundsIsRefusedQuickly) {
  const std::string line = "a 127.0.0.1:7000@17000 master - 0 0 1 connected";
  EXPECT_TRUE(redis::parse_cluster_nodes(line + " 0-16383\n", "h").has_value());
  EXPECT_FALSE(redis::parse_cluster_nodes(line + " 0-16383 0\n", "h").has_value()) << "slot 0 twice";
  EXPECT_FALSE(redis::parse_cluster_nodes(line + " 0-100\n" + line + " 50-60\n", "h").has_value());
  std::string repeated = line;
  while (repeated.size() < redis::kMaxClusterNodesReply - 16) repeated += " 0-16383";
  const auto start = Clock::now();
  EXPECT_FALSE(redis::parse_cluster_nodes(repeated + "\n", "h").has_value());
  EXPECT_LT(elapsed_ms(start), 200);
  std::string many;
  for (std::size_t i = 0; i <= redis::kMaxClusterNodes; ++i)
    many += std::to_string(i) + " 127.0.0.1:" + std::to_string(1000 + i) + "@1 master - 0 0 1 connected\n";
  EXPECT_FALSE(redis::parse_cluster_nodes(many, "h").has_value()) << "more nodes than kMaxClusterNodes";
  std::string too_long = line + " 0-16383\n";
  too_long.resize(redis::kMaxClusterNodesReply + 1, '\n');
  EXPECT_FALSE(redis::parse_cluster_nodes(too_long, "h").has_value());
}

TEST(RedisCluster, RoundTripsAreExactAcrossEveryMaster) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok());
  auto tier = cluster_tier(cluster);
  ASSERT_NE(tier, nullptr);
  EXPECT_EQ(tier->display_name().find(cluster.node(0).password()), std::string::npos);
  for (int i = 0; i < 200; ++i) {
    const std::string key = "key-" + std::to_string(i);
    ASSERT_EQ(
        tier->put(key, random_bytes(static_cast<std::size_t>(i) * 331, static_cast<unsigned>(i)), in(kGenerous)).code,
        TierCode::kOk)
        << key;
  }
  for (int i = 0; i < 200; ++i) {
    const std::string key = "key-" + std::to_string(i);
    const TierResult got = tier->get(key, in(kGenerous));
    ASSERT_EQ(got.code, TierCode::kOk) << got.detail;
    EXPECT_TRUE(got.value == random_bytes(static_cast<std::size_t>(i) * 331, static_cast<unsigned>(i))) << key;
  }
  EXPECT_EQ(tier->get("absent", in(kGenerous)).code, TierCode::kMiss);
  // 16 threads making the first requests of a fresh tier together: those that arrive while one of
  // them fills the slot map wait for it; none fails.
  for (int round = 0; round < 5; ++round) {
    auto fresh = cluster_tier(cluster);
    ASSERT_NE(fresh, nullptr);
    std::vector<TierResult> got(16);
    std::vector<std::thread> readers;
    for (int t = 0; t < 16; ++t) {
      readers.emplace_back([&, t] { got[t] = fresh->get("key-" + std::to_string(t * 7), in(kGenerous)); });
    }
    for (std::thread& reader : readers) reader.join();
    for (int t = 0; t < 16; ++t) {
      ASSERT_EQ(got[t].code, TierCode::kOk) << "round " << round << ", reader " << t << ": " << got[t].detail;
      EXPECT_TRUE(got[t].value == random_bytes(static_cast<std::size_t>(t * 7) * 331, static_cast<unsigned>(t * 7)));
    }
  }
  const std::vector<int> masters = cluster.masters();
  ASSERT_EQ(masters.size(), 3u);
  for (int m : masters) EXPECT_GT(integer_of(cluster.node(m).command({"DBSIZE"})), 30) << "node " << m;

  // A value and its claim share a slot: the claim is taken, seen, refused to another, released.
  const std::string claim = "key-7";
  EXPECT_EQ(redis::key_slot("nvrtc-cache:v1:claim:{" + hex(claim) + "}"), slot_of(claim));
  EXPECT_EQ(tier->try_claim(claim, "token-1", 5000ms, in(kGenerous), nullptr), ClaimCode::kClaimed);
  EXPECT_EQ(tier->try_claim(claim, "token-2", 5000ms, in(kGenerous), nullptr), ClaimCode::kHeldByOther);
  const auto holder = tier->claim_holder(claim, in(kGenerous));
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(holder->token, "token-1");
  EXPECT_TRUE(tier->renew_claim(claim, "token-1", 5000ms, in(kGenerous)));
  tier->release_claim(claim, "token-1", in(kGenerous));
  EXPECT_FALSE(tier->claim_holder(claim, in(kGenerous)).has_value());

  const TierResult checked = tier->check(in(kGenerous));
  EXPECT_EQ(checked.code, TierCode::kOk) << checked.detail;
  EXPECT_NE(checked.detail.find("a cluster of 3 masters"), std::string::npos) << checked.detail;
  EXPECT_NE(checked.detail.find("SET/GET/DEL of a probe key"), std::string::npos) << checked.detail;

  std::size_t listed = 0;
  EXPECT_TRUE(tier->for_each_value([&](std::string_view, std::int64_t) { return ++listed, true; }, in(kGenerous)).ok());
  EXPECT_EQ(listed, 200u) << "every master's values are listed";
}

TEST(RedisCluster, ASlotMigratedDuringTheRunIsFollowed) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok());
  auto tier = cluster_tier(cluster);
  ASSERT_NE(tier, nullptr);
  ASSERT_EQ(tier->put("warm", "up", in(kGenerous)).code, TierCode::kOk);  // the slot map is known now
  const std::string key = "migrating";
  const std::uint16_t slot = slot_of(key);
  const int source = cluster.owner_of(slot);
  ASSERT_GE(source, 0);
  int target = -1;
  for (int m : cluster.masters()) {
    if (m != source) target = m;
  }
  ASSERT_GE(target, 0);
  const std::string slot_text = std::to_string(slot);
  ASSERT_EQ(cluster.node(target).command({"CLUSTER", "SETSLOT", slot_text, "IMPORTING", cluster.id_of(source)}).text,
            "OK");
  ASSERT_EQ(cluster.node(source).command({"CLUSTER", "SETSLOT", slot_text, "MIGRATING", cluster.id_of(target)}).text,
            "OK");
  // The key is not on the source: it answers -ASK, and the tier writes and reads it on the target.
  ASSERT_EQ(tier->put(key, "moved value", in(kGenerous)).code, TierCode::kOk);
  EXPECT_EQ(integer_of(cluster.node(target).command({"CLUSTER", "COUNTKEYSINSLOT", slot_text})), 1);
  EXPECT_EQ(integer_of(cluster.node(source).command({"CLUSTER", "COUNTKEYSINSLOT", slot_text})), 0);
  const TierResult asked = tier->get(key, in(kGenerous));
  ASSERT_EQ(asked.code, TierCode::kOk) << asked.detail;
  EXPECT_EQ(asked.value, "moved value");
  // The migration ends: the source answers -MOVED, and the tier moves the slot.
  for (int m : cluster.masters()) {
    cluster.node(m).command({"CLUSTER", "SETSLOT", slot_text, "NODE", cluster.id_of(target)});
  }
  for (int i = 0; i < 3; ++i) {
    const TierResult moved = tier->get(key, in(kGenerous));
    ASSERT_EQ(moved.code, TierCode::kOk) << moved.detail;
    EXPECT_EQ(moved.value, "moved value");
  }
  EXPECT_EQ(tier->get("warm", in(kGenerous)).value, "up");
}

TEST(RedisCluster, AKilledMasterCostsAtMostATimeoutAndNothingWrong) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok());
  auto tier = cluster_tier(cluster, "?timeout=300");
  ASSERT_NE(tier, nullptr);
  constexpr int kKeys = 60;
  auto value_of = [](int i) { return random_bytes(2000 + static_cast<std::size_t>(i), static_cast<unsigned>(i)); };
  for (int i = 0; i < kKeys; ++i)
    ASSERT_EQ(tier->put("k" + std::to_string(i), value_of(i), in(kGenerous)).code, TierCode::kOk);
  std::this_thread::sleep_for(300ms);  // the replicas have every write (asynchronous replication, loopback)
  const int victim = cluster.owner_of(slot_of("k0"));
  ASSERT_GE(victim, 0);
  cluster.node(victim).kill9();

  long long slowest = 0;
  int wrong = 0, failed = 0;
  std::string last_failure;
  const auto give_up = Clock::now() + 20s;
  bool all_served = false;
  while (Clock::now() < give_up && !all_served) {
    all_served = true;
    for (int i = 0; i < kKeys; ++i) {
      const auto start = Clock::now();
      const TierResult got = tier->get("k" + std::to_string(i), in(300ms));
      slowest = std::max(slowest, elapsed_ms(start));
      if (got.code == TierCode::kOk && got.value != value_of(i)) ++wrong;
      if (got.code != TierCode::kOk) {
        ++failed;
        last_failure = got.detail;
        all_served = false;
      }
    }
    if (!all_served) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(all_served) << "the replica never served the killed master's keys: " << last_failure;
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(failed, 0) << "the kill changed nothing: the test proved nothing";
  EXPECT_LE(slowest, 400) << "an operation waited past its timeout";
  const TierResult after = tier->put("after", "failover", in(kGenerous));
  EXPECT_EQ(after.code, TierCode::kOk) << after.detail;
  EXPECT_EQ(tier->get("after", in(kGenerous)).value, "failover");
}

TEST(RedisCluster, UrlsAreChecked) {
  std::string problem;
  auto url = parse_tier_url("redis+cluster://h:7000/2", &problem);
  ASSERT_TRUE(url.has_value()) << problem;
  EXPECT_EQ(make_redis_tier(*url, {}, &problem), nullptr);
  EXPECT_NE(problem.find("only database 0"), std::string::npos) << problem;
  url = parse_tier_url("redis+cluster://:pw@h:7000?seeds=h2:7001,[::1]:7002", &problem);
  ASSERT_TRUE(url.has_value()) << problem;
  problem.clear();
  (void)tier_options(*url, &problem);
  EXPECT_EQ(problem, "");
  EXPECT_NE(make_redis_tier(*url, {}, &problem), nullptr) << problem;
  url = parse_tier_url("redis+cluster://h:7000?seeds=h2:x", &problem);
  ASSERT_TRUE(url.has_value());
  EXPECT_EQ(make_redis_tier(*url, {}, &problem), nullptr);
  EXPECT_NE(problem.find("malformed seeds"), std::string::npos) << problem;
  url = parse_tier_url("redis://h:7000?seeds=h2:7001", &problem);
  ASSERT_TRUE(url.has_value());
  EXPECT_EQ(make_redis_tier(*url, {}, &problem), nullptr);
  for (const char* bad : {"redis+cluster://h:7000?read-from=sometimes", "redis://h:7000?read-from=replica"}) {
    url = parse_tier_url(bad, &problem);
    ASSERT_TRUE(url.has_value()) << bad;
    problem.clear();
    EXPECT_EQ(make_redis_tier(*url, {}, &problem), nullptr) << bad;
    EXPECT_NE(problem.find("read-from"), std::string::npos) << problem;
  }
}

// The GETs a node has answered (INFO commandstats).
long long gets_answered(testing::RedisServer& node) {
  const std::string info = node.command({"INFO", "commandstats"}).text;
  const std::string marker = "cmdstat_get:calls=";
  const std::size_t at = info.find(marker);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + marker.size()));
}

// read-from=replica: GETs are answered by the replicas, exactly; a killed replica leaves its reads
// to its master (nothing wrong, nothing lost).
TEST(RedisCluster, ReadsGoToReplicasWhenAsked) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok());
  auto writer = cluster_tier(cluster);
  auto reader = cluster_tier(cluster, "?read-from=replica&timeout=300");
  ASSERT_NE(writer, nullptr);
  ASSERT_NE(reader, nullptr);
  constexpr int kKeys = 100;
  auto value_of = [](int i) { return random_bytes(1000 + static_cast<std::size_t>(i), static_cast<unsigned>(i)); };
  for (int i = 0; i < kKeys; ++i)
    ASSERT_EQ(writer->put("r" + std::to_string(i), value_of(i), in(kGenerous)).code, TierCode::kOk);
  std::this_thread::sleep_for(300ms);  // the replicas have every write (asynchronous replication, loopback)
  const std::vector<int> masters = cluster.masters();
  ASSERT_EQ(masters.size(), 3u);
  std::vector<int> replicas;
  for (int i = 0; i < 6; ++i) {
    if (std::find(masters.begin(), masters.end(), i) == masters.end()) replicas.push_back(i);
  }
  ASSERT_EQ(replicas.size(), 3u);
  for (int i = 0; i < kKeys; ++i) {
    const TierResult got = reader->get("r" + std::to_string(i), in(kGenerous));
    ASSERT_EQ(got.code, TierCode::kOk) << got.detail;
    EXPECT_TRUE(got.value == value_of(i)) << i;
  }
  long long by_replicas = 0;
  for (int r : replicas) by_replicas += gets_answered(cluster.node(r));
  EXPECT_EQ(by_replicas, kKeys) << "the replicas did not answer every read";
  for (int m : masters) EXPECT_EQ(gets_answered(cluster.node(m)), 0) << "node " << m;

  cluster.node(replicas[0]).kill9();
  for (int i = 0; i < kKeys; ++i) {
    const TierResult got = reader->get("r" + std::to_string(i), in(kGenerous));
    ASSERT_EQ(got.code, TierCode::kOk) << got.detail;
    EXPECT_TRUE(got.value == value_of(i)) << i;
  }
  long long by_masters = 0;
  for (int m : masters) by_masters += gets_answered(cluster.node(m));
  EXPECT_GT(by_masters, 0) << "the killed replica's reads never reached its master";
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
