// The Redis tier against real redis-server processes (tests/support/redis_server.h): round trips over
// TCP and a unix socket, databases, prefixes, TTLs, binary and large values, size caps, threads, and
// a forked child's own connection. Failures: redis_tier_failures_test.cc; shards, claims and the
// URL's configuration: redis_shards_claims_test.cc.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "store/remote/tier.h"
#include "tests/support/allocation_tracking.h"
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
// Round trips

TEST(RedisTier, RoundTripOverTcp) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  auto tier = make(tcp_url(server));
  ASSERT_NE(tier, nullptr);
  EXPECT_TRUE(tier->writable());
  EXPECT_EQ(tier->get("absent", in(kGenerous)).code, TierCode::kMiss);
  ASSERT_EQ(tier->put("key", "first", in(kGenerous)).code, TierCode::kOk);
  ASSERT_EQ(tier->put("key", "second", in(kGenerous)).code, TierCode::kOk);
  const TierResult got = tier->get("key", in(kGenerous));
  ASSERT_EQ(got.code, TierCode::kOk) << got.detail;
  EXPECT_EQ(got.value, "second");
  // The documented layout: <prefix>:v1:<hex key>, the value as given.
  const Reply raw = server.command({"GET", "nvrtc-cache:v1:" + hex("key")});
  EXPECT_EQ(raw.kind, Reply::Kind::kBulk);
  EXPECT_EQ(raw.text, "second");
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), 1);
}

TEST(RedisTier, RoundTripOverUnixSocket) {
  RedisServerOptions options;
  options.unix_socket = true;
  RedisServer server(options);
  ASSERT_TRUE(server.ok());
  auto tier = make(unix_url(server));
  ASSERT_NE(tier, nullptr);
  ASSERT_EQ(tier->put("key", "over a unix socket", in(kGenerous)).code, TierCode::kOk);
  const TierResult got = tier->get("key", in(kGenerous));
  ASSERT_EQ(got.code, TierCode::kOk) << got.detail;
  EXPECT_EQ(got.value, "over a unix socket");
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), 1);
}

TEST(RedisTier, SelectsTheDatabase) {
  RedisServerOptions options;
  options.unix_socket = true;
  RedisServer server(options);
  ASSERT_TRUE(server.ok());
  auto db2 = make(tcp_url(server, 2));
  auto db3_unix = make(unix_url(server, 3));
  auto db0 = make(tcp_url(server, 0));
  ASSERT_EQ(db2->put("key", "in two", in(kGenerous)).code, TierCode::kOk);
  ASSERT_EQ(db3_unix->put("key", "in three", in(kGenerous)).code, TierCode::kOk);
  EXPECT_EQ(db0->get("key", in(kGenerous)).code, TierCode::kMiss);
  EXPECT_EQ(db2->get("key", in(kGenerous)).value, "in two");
  EXPECT_EQ(db3_unix->get("key", in(kGenerous)).value, "in three");
  EXPECT_EQ(integer_of(server.command({"DBSIZE"}, 0)), 0);
  EXPECT_EQ(integer_of(server.command({"DBSIZE"}, 2)), 1);
  EXPECT_EQ(integer_of(server.command({"DBSIZE"}, 3)), 1);

  auto missing_db = make(tcp_url(server, 99));  // the server has 16 databases
  const TierResult refused = missing_db->get("key", in(kGenerous));
  EXPECT_EQ(refused.code, TierCode::kRefused);
  EXPECT_NE(refused.detail.find("database 99 does not exist"), std::string::npos) << refused.detail;
}

TEST(RedisTier, PrefixesIsolateNamespaces) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  TierOptions team_a;
  team_a.prefix = "team-a";
  TierOptions team_b;
  team_b.prefix = "team-b";
  auto a = make(tcp_url(server), team_a);
  auto b = make(tcp_url(server), team_b);
  ASSERT_EQ(a->put("key", "a's", in(kGenerous)).code, TierCode::kOk);
  EXPECT_EQ(b->get("key", in(kGenerous)).code, TierCode::kMiss);
  EXPECT_EQ(a->get("key", in(kGenerous)).value, "a's");
  EXPECT_EQ(integer_of(server.command({"EXISTS", "team-a:v1:" + hex("key")})), 1);
}

TEST(RedisTier, AppliesTheTtl) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  TierOptions with_ttl;
  with_ttl.ttl = 100s;
  ASSERT_EQ(make(tcp_url(server), with_ttl)->put("expiring", "v", in(kGenerous)).code, TierCode::kOk);
  ASSERT_EQ(make(tcp_url(server))->put("lasting", "v", in(kGenerous)).code, TierCode::kOk);
  const long long pttl = integer_of(server.command({"PTTL", "nvrtc-cache:v1:" + hex("expiring")}));
  EXPECT_GT(pttl, 90'000);
  EXPECT_LE(pttl, 100'000);
  EXPECT_EQ(integer_of(server.command({"PTTL", "nvrtc-cache:v1:" + hex("lasting")})), -1);  // no expiry
}

TEST(RedisTier, BinaryKeysAndValues) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  auto tier = make(tcp_url(server));
  const std::string key("\0\xff\r\n$*\0", 7);
  const std::string value("\0\r\n$-1\r\n\0\xfe", 10);
  ASSERT_EQ(tier->put(key, value, in(kGenerous)).code, TierCode::kOk);
  const TierResult got = tier->get(key, in(kGenerous));
  ASSERT_EQ(got.code, TierCode::kOk) << got.detail;
  EXPECT_EQ(got.value, value);
  ASSERT_EQ(tier->put("empty", "", in(kGenerous)).code, TierCode::kOk);
  const TierResult empty = tier->get("empty", in(kGenerous));
  EXPECT_EQ(empty.code, TierCode::kOk);
  EXPECT_EQ(empty.value, "");
}

TEST(RedisTier, MultiMegabyteValues) {
  RedisServerOptions options;
  options.unix_socket = true;
  RedisServer server(options);
  ASSERT_TRUE(server.ok());
  const std::string value = random_bytes(24 << 20, 1);
  for (const TierUrl& url : {tcp_url(server), unix_url(server)}) {
    auto tier = make(url);
    ASSERT_EQ(tier->put("big", value, in(30s)).code, TierCode::kOk);
    const TierResult got = tier->get("big", in(30s));
    ASSERT_EQ(got.code, TierCode::kOk) << got.detail;
    EXPECT_TRUE(got.value == value);
  }
}

TEST(RedisTier, RefusesValuesOverMaxEntrySizeAndCapsReads) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  TierOptions small;
  small.max_entry_size = 1000;
  auto tier = make(tcp_url(server), small);
  const TierResult refused = tier->put("too-big", std::string(1001, 'x'), in(kGenerous));
  EXPECT_EQ(refused.code, TierCode::kRefused);
  EXPECT_NE(refused.detail.find("max-entry-size"), std::string::npos) << refused.detail;
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), 0);
  EXPECT_EQ(tier->put("fits", std::string(1000, 'x'), in(kGenerous)).code, TierCode::kOk);

  // A value larger than the limit plus slack (written by another client) is not read into memory.
  ASSERT_EQ(make(tcp_url(server))->put("huge", std::string(1 << 20, 'y'), in(kGenerous)).code, TierCode::kOk);
  TierResult capped;
  const std::size_t largest = testing::largest_allocation_during([&] { capped = tier->get("huge", in(kGenerous)); });
  EXPECT_EQ(capped.code, TierCode::kError);
  EXPECT_NE(capped.detail.find("larger than the limit"), std::string::npos) << capped.detail;
  EXPECT_LT(largest, 512u << 10);
  EXPECT_EQ(tier->get("fits", in(kGenerous)).code, TierCode::kOk);  // the tier recovers (new connection)
}

TEST(RedisTier, ThreadsShareTheTier) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  auto tier = make(tcp_url(server));
  constexpr int kThreads = 12;  // more than the pool keeps: some connections are closed on return
  constexpr int kRounds = 100;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        const std::string key = "thread-" + std::to_string(t) + "-" + std::to_string(i % 10);
        const std::string value =
            random_bytes(100 + static_cast<std::size_t>(i) * 37, static_cast<unsigned>(t * 1000 + i));
        if (tier->put(key, value, in(kGenerous)).code != TierCode::kOk) ++wrong;
        const TierResult got = tier->get(key, in(kGenerous));
        if (got.code != TierCode::kOk || got.value != value) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), kThreads * 10);
}

// ---------------------------------------------------------------------------------------------
// fork

// CLIENT LIST, as id -> last command, without the connection asking.
std::map<long long, std::string> clients(const RedisServer& server) {
  std::map<long long, std::string> out;
  std::istringstream lines(server.command({"CLIENT", "LIST"}).text);
  for (std::string line; std::getline(lines, line);) {
    long long id = -1;
    std::string command;
    std::istringstream fields(line);
    for (std::string field; fields >> field;) {
      if (field.rfind("id=", 0) == 0) id = std::stoll(field.substr(3));
      if (field.rfind("cmd=", 0) == 0) command = field.substr(4);
    }
    if (command != "client|list") out[id] = command;
  }
  return out;
}

TEST(RedisTier, ForkedChildUsesItsOwnConnection) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  auto tier = make(tcp_url(server));
  ASSERT_EQ(tier->put("parent", "p", in(kGenerous)).code, TierCode::kOk);
  ASSERT_EQ(tier->get("parent", in(kGenerous)).code, TierCode::kOk);
  const auto before = clients(server);
  ASSERT_EQ(before.size(), 1u);
  const long long parent_id = before.begin()->first;
  EXPECT_EQ(before.begin()->second, "get");

  int done[2], go_on[2];
  ASSERT_EQ(pipe(done), 0);
  ASSERT_EQ(pipe(go_on), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool ok =
        tier->put("child", "c", in(kGenerous)).code == TierCode::kOk && tier->get("parent", in(kGenerous)).value == "p";
    const char byte = ok ? 'y' : 'n';
    (void)!write(done[1], &byte, 1);
    char wait;
    (void)!read(go_on[0], &wait, 1);  // keep the connection open while the parent looks
    _exit(ok ? 0 : 1);
  }
  char byte = 0;
  ASSERT_EQ(read(done[0], &byte, 1), 1);
  EXPECT_EQ(byte, 'y');
  const auto during = clients(server);
  EXPECT_EQ(during.size(), 2u);
  ASSERT_TRUE(during.count(parent_id));
  EXPECT_EQ(during.at(parent_id), "get");  // the child never sent on the parent's connection
  for (const auto& [id, command] : during) {
    if (id != parent_id) {
      EXPECT_EQ(command, "get") << "the child's own connection, id " << id;
    }
  }
  ASSERT_EQ(write(go_on[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int fd : {done[0], done[1], go_on[0], go_on[1]}) close(fd);

  // The parent's connection survived the child's exit and is still the one it uses.
  EXPECT_EQ(tier->get("child", in(kGenerous)).value, "c");
  const auto after = clients(server);
  EXPECT_EQ(after.size(), 1u);
  EXPECT_TRUE(after.count(parent_id));
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
