// The Redis tier's shards (rendezvous hashing against real redis-server processes), cross-node claims
// (one winner, leases, renewals), and the configuration a redis:// or redis+unix:// URL names.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/remote/claim_renewer.h"
#include "store/remote/redis/redis_config.h"
#include "store/remote/redis/shard_choice.h"
#include "store/remote/tier.h"
#include "tests/support/redis_server.h"
#include "tests/support/redis_tier_testing.h"

namespace nvrtc_cache::store::remote {
namespace {

using namespace std::chrono_literals;
using namespace redis_tier_testing;
using testing::RedisServer;
using testing::RedisServerOptions;
using Reply = redis::Reply;

// ---------------------------------------------------------------------------------------------
// Shards

TEST(RedisShards, RendezvousMovesOnlyTheNewShardsShare) {
  const std::vector<redis::ShardWeight> three{{"a"}, {"b"}, {"c"}};
  const std::vector<redis::ShardWeight> four{{"a"}, {"b"}, {"c"}, {"d"}};
  constexpr int kKeys = 20000;
  std::array<int, 3> counts{};
  int moved = 0;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "key-" + std::to_string(i);
    const std::size_t before = redis::choose_shard(key, three);
    const std::size_t after = redis::choose_shard(key, four);
    ++counts[before];
    if (before != after) {
      ++moved;
      EXPECT_EQ(after, 3u) << key << " moved between old shards";
    }
  }
  for (int count : counts) EXPECT_NEAR(count, kKeys / 3, kKeys / 20);
  EXPECT_NEAR(moved, kKeys / 4, kKeys / 25);

  const std::vector<redis::ShardWeight> weighted{{"a", 1.0}, {"b", 3.0}};
  int to_b = 0;
  for (int i = 0; i < kKeys; ++i) to_b += redis::choose_shard("key-" + std::to_string(i), weighted) == 1;
  EXPECT_NEAR(to_b, kKeys * 3 / 4, kKeys / 25);
}

TEST(RedisShards, KeysSpreadOverServersAndAFourthTakesAQuarter) {
  std::vector<std::unique_ptr<RedisServer>> servers;
  for (int i = 0; i < 4; ++i) {
    servers.push_back(std::make_unique<RedisServer>());
    ASSERT_TRUE(servers.back()->ok());
  }
  auto sharded = [&](int count) {
    TierUrl url;
    url.scheme = "redis";
    url.password = servers[0]->password();
    url.host = "*";
    std::string list;
    for (int i = 0; i < count; ++i)
      list += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(servers[i]->port());
    url.query["shards"] = list;
    return make(url);
  };
  auto three = sharded(3);
  ASSERT_NE(three, nullptr);
  constexpr int kKeys = 600;
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ(three->put("key-" + std::to_string(i), "value-" + std::to_string(i), in(kGenerous)).code, TierCode::kOk);
  }
  long long total = 0;
  for (int i = 0; i < 3; ++i) {
    const long long on_server = integer_of(servers[i]->command({"DBSIZE"}));
    EXPECT_GT(on_server, kKeys / 3 - kKeys / 8) << "server " << i;
    EXPECT_LT(on_server, kKeys / 3 + kKeys / 8) << "server " << i;
    total += on_server;
  }
  EXPECT_EQ(total, kKeys);

  auto four = sharded(4);
  int misses = 0;
  for (int i = 0; i < kKeys; ++i) {
    const TierResult got = four->get("key-" + std::to_string(i), in(kGenerous));
    if (got.code == TierCode::kMiss)
      ++misses;
    else
      EXPECT_EQ(got.value, "value-" + std::to_string(i));
  }
  EXPECT_GT(misses, kKeys / 4 - kKeys / 10);  // the keys the new server wins, and only those
  EXPECT_LT(misses, kKeys / 4 + kKeys / 10);
}

// ---------------------------------------------------------------------------------------------
// Claims

TEST(RedisClaims, OneWinsOnlyTheHolderReleasesAndLeasesExpire) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  auto first = make(tcp_url(server));
  auto second = make(tcp_url(server));
  EXPECT_EQ(first->try_claim("program", "token-1", 10s, in(kGenerous), nullptr), ClaimCode::kClaimed);
  EXPECT_EQ(second->try_claim("program", "token-2", 10s, in(kGenerous), nullptr), ClaimCode::kHeldByOther);
  second->release_claim("program", "token-2", in(kGenerous));  // not the holder: nothing happens
  EXPECT_EQ(second->try_claim("program", "token-2", 10s, in(kGenerous), nullptr), ClaimCode::kHeldByOther);
  const long long lease = integer_of(server.command({"PTTL", "nvrtc-cache:v1:claim:" + hex("program")}));
  EXPECT_GT(lease, 5000);
  first->release_claim("program", "token-1", in(kGenerous));
  EXPECT_EQ(second->try_claim("program", "token-2", 10s, in(kGenerous), nullptr), ClaimCode::kClaimed);
  EXPECT_EQ(first->get("program", in(kGenerous)).code, TierCode::kMiss);  // claims are not values

  EXPECT_EQ(first->try_claim("short", "token-1", 200ms, in(kGenerous), nullptr), ClaimCode::kClaimed);
  EXPECT_EQ(second->try_claim("short", "token-2", 200ms, in(kGenerous), nullptr), ClaimCode::kHeldByOther);
  ClaimCode after_lease = ClaimCode::kHeldByOther;
  const auto give_up = Clock::now() + 5s;
  while (after_lease == ClaimCode::kHeldByOther && Clock::now() < give_up) {
    std::this_thread::sleep_for(50ms);
    after_lease = second->try_claim("short", "token-2", 10s, in(kGenerous), nullptr);
  }
  EXPECT_EQ(after_lease, ClaimCode::kClaimed);
}

// A holder renews its short lease while it compiles: the claim outlives many leases while renewed,
// only its holder can renew it, and it lapses one lease after the renewals stop (a holder killed or
// stopped). A waiter reads the holder's token and remaining lease in one round trip.
TEST(RedisClaims, RenewedClaimsOutliveTheirLeaseAndLapseOneLeaseAfterTheRenewalsStop) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  std::shared_ptr<Tier> holder = make(tcp_url(server));
  auto waiter = make(tcp_url(server));
  constexpr auto kLease = 300ms;
  ASSERT_EQ(holder->try_claim("program", "token-1", kLease, in(kGenerous), nullptr), ClaimCode::kClaimed);
  const std::optional<ClaimHolder> seen = waiter->claim_holder("program", in(kGenerous));
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->token, "token-1");
  EXPECT_GT(seen->remaining.count(), 0);
  EXPECT_LE(seen->remaining, kLease);
  EXPECT_FALSE(waiter->claim_holder("absent", in(kGenerous)));
  EXPECT_FALSE(waiter->renew_claim("program", "token-2", 60s, in(kGenerous))) << "another's claim was renewed";
  EXPECT_LE(waiter->claim_holder("program", in(kGenerous))->remaining, kLease);

  ClaimRenewer renewer;
  std::atomic<int> renewals{0};
  const std::uint64_t id = renewer.add(
      [&] {
        ++renewals;
        return holder->renew_claim("program", "token-1", kLease, in(kGenerous));
      },
      kLease);
  ASSERT_NE(id, 0u);
  const auto renewed_until = Clock::now() + 5 * kLease;
  while (Clock::now() < renewed_until) {
    ASSERT_EQ(waiter->try_claim("program", "token-2", kLease, in(kGenerous), nullptr), ClaimCode::kHeldByOther)
        << "a renewed claim lapsed";
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_GE(renewals.load(), 5);
  renewer.remove(id);
  const auto stopped = Clock::now();
  ClaimCode after = ClaimCode::kHeldByOther;
  while (after == ClaimCode::kHeldByOther && Clock::now() < stopped + 5s) {
    std::this_thread::sleep_for(10ms);
    after = waiter->try_claim("program", "token-2", kLease, in(kGenerous), nullptr);
  }
  EXPECT_EQ(after, ClaimCode::kClaimed);
  EXPECT_LE(Clock::now() - stopped, kLease + 1s) << "the claim outlived its holder's renewals by more than a lease";

  // A renewal that finds the claim another's drops its entry.
  std::atomic<int> lost_renewals{0};
  (void)renewer.add(
      [&] {
        ++lost_renewals;
        return holder->renew_claim("program", "token-1", kLease, in(kGenerous));
      },
      60ms);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(lost_renewals.load(), 1);
  EXPECT_EQ(renewer.held(), 0u);
}

// ---------------------------------------------------------------------------------------------
// URLs

TEST(RedisConfig, ParsesServersDatabaseAndShards) {
  std::string problem;
  TierUrl url;
  url.scheme = "redis";
  url.host = "cache.example";
  auto config = redis::redis_config(url, &problem);
  ASSERT_TRUE(config) << problem;
  ASSERT_EQ(config->servers.size(), 1u);
  EXPECT_EQ(config->servers[0].port, 6379);
  EXPECT_EQ(config->db, 0u);
  EXPECT_EQ(config->servers[0].display, "redis://cache.example:6379");

  url.path = "/5";
  url.port = 7000;
  url.user = "builder";
  url.password = "hunter2";
  config = redis::redis_config(url, &problem);
  ASSERT_TRUE(config) << problem;
  EXPECT_EQ(config->db, 5u);
  EXPECT_EQ(config->servers[0].port, 7000);
  EXPECT_EQ(config->user, "builder");
  EXPECT_EQ(url.display(), "redis://builder:***@cache.example:7000/5");

  url.query["db"] = "6";
  EXPECT_FALSE(redis::redis_config(url, &problem));  // two different databases
  EXPECT_EQ(problem.find("hunter2"), std::string::npos) << problem;
  url.query.erase("db");

  url.host = "cache-*.example";
  url.query["shards"] = "1,2(2.5),3";
  config = redis::redis_config(url, &problem);
  ASSERT_TRUE(config) << problem;
  ASSERT_EQ(config->servers.size(), 3u);
  EXPECT_EQ(config->servers[1].host, "cache-2.example");
  EXPECT_EQ(config->servers[1].shard_name, "2");
  EXPECT_EQ(config->servers[1].weight, 2.5);
  EXPECT_EQ(config->servers[2].port, 7000);

  url.host = "*";
  url.query["shards"] = "10.0.0.1:6380,[::1]:6381,10.0.0.2";
  config = redis::redis_config(url, &problem);
  ASSERT_TRUE(config) << problem;
  EXPECT_EQ(config->servers[0].host, "10.0.0.1");
  EXPECT_EQ(config->servers[0].port, 6380);
  EXPECT_EQ(config->servers[1].host, "::1");
  EXPECT_EQ(config->servers[1].display, "redis://[::1]:6381");
  EXPECT_EQ(config->servers[2].port, 7000);

  for (const char* bad : {"a,,b", "a(0)", "a(x)", "a,a", ""}) {
    url.query["shards"] = bad;
    EXPECT_FALSE(redis::redis_config(url, &problem)) << bad;
  }
  url.query.erase("shards");
  EXPECT_FALSE(redis::redis_config(url, &problem));  // a `*` without shards
  url.host = "plain";
  url.query["shards"] = "a,b";
  EXPECT_FALSE(redis::redis_config(url, &problem));  // shards without a `*`

  TierUrl socket;
  socket.scheme = "redis+unix";
  socket.path = "/run/redis-*.sock";
  socket.query = {{"db", "2"}, {"shards", "a,b"}};
  config = redis::redis_config(socket, &problem);
  ASSERT_TRUE(config) << problem;
  EXPECT_EQ(config->db, 2u);
  EXPECT_EQ(config->servers[1].socket_path, "/run/redis-b.sock");
  EXPECT_EQ(config->servers[1].display, "redis+unix:///run/redis-b.sock");
  socket.path = "relative.sock";
  socket.query.clear();
  EXPECT_FALSE(redis::redis_config(socket, &problem));
  socket.path = "/" + std::string(200, 's');
  EXPECT_FALSE(redis::redis_config(socket, &problem));
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
