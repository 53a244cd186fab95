// A shared Redis tier through real processes, the real NVRTC and a real redis-server (tests/
// redis_server.h): "nodes" are separate cache directories sharing one server (NVRTC_CACHE_REMOTE
// with a password). Every result is compared byte for byte with NVRTC's.
#include <chrono>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/harness.h"
#include "tests/redis_server.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;
using store::remote::redis::Reply;

long long integer_of(const Reply& reply) {
  EXPECT_EQ(reply.kind, Reply::Kind::kInteger) << reply.text;
  return reply.integer;
}

// The data keys on the server (claims and probes aside). KEYS answers an array, which the test's
// client does not read: a script joins it into one string.
std::vector<std::string> data_keys(const RedisServer& server) {
  const Reply joined = server.command(
      {"EVAL", "return table.concat(redis.call('KEYS', ARGV[1]), '\\n')", "0", "nvrtc-cache:v1:*"});
  EXPECT_EQ(joined.kind, Reply::Kind::kBulk) << joined.text;
  std::vector<std::string> keys;
  std::istringstream lines(joined.text);
  for (std::string key; std::getline(lines, key);) {
    if (!key.empty() && key.find(":claim:") == std::string::npos && key.find(":probe:") == std::string::npos) {
      keys.push_back(key);
    }
  }
  return keys;
}

std::vector<ProcessResult> probes_together(int count, const std::vector<std::string>& scenarios,
                                           const std::function<EnvVars(int)>& env_of) {
  std::vector<ProcessResult> results(static_cast<std::size_t>(count));
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&, i] { results[static_cast<std::size_t>(i)] = probe(scenarios, env_of(i)); });
  }
  for (auto& t : threads) t.join();
  return results;
}

class SharedRedisTier : public DirectRunSuite {
 protected:
  std::string node(const std::string& name) const { return root_.path() + "/" + name; }

  // Runs the scenarios on a node; expects NVRTC's exact results.
  ProcessResult run(const std::string& node_dir, const std::string& remote) {
    ProcessResult r = probe(kTierScenarios, node_env(node_dir, remote));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct_->out) << "a result differs from NVRTC's";
    return r;
  }

};

TEST_F(SharedRedisTier, AColdNodeIsServedFromRedisThenFromItsOwnStore) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  const ProcessResult a = run(node("a"), server.url());
  EXPECT_EQ(a.err, "");
  const auto ca = counters_of(node("a"));
  ASSERT_GT(get(ca, "stores"), 0);
  EXPECT_EQ(get(ca, "tier.0.writes"), 2 * get(ca, "stores")) << "a result and a manifest per store";
  EXPECT_EQ(get(ca, "tier.0.errors"), 0);
  EXPECT_EQ(static_cast<std::int64_t>(data_keys(server).size()), get(ca, "tier.0.writes"));

  const ProcessResult b = run(node("b"), server.url());
  EXPECT_EQ(b.err, "");
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(cb, "misses"), 0) << "node b compiled";
  EXPECT_EQ(get(cb, "hits"), get(ca, "stores"));
  EXPECT_EQ(get(cb, "tier.0.hits"), 2 * get(ca, "stores"));
  EXPECT_EQ(get(cb, "tier.0.writes"), 0);

  run(node("b"), server.url());
  const auto cb2 = counters_of(node("b"));
  EXPECT_EQ(get(cb2, "hits"), 2 * get(ca, "stores"));
  EXPECT_EQ(get(cb2, "tier.0.hits"), get(cb, "tier.0.hits")) << "the second run was not local";
  EXPECT_EQ(get(cb2, "misses"), 0);
}

TEST_F(SharedRedisTier, AFrozenServerCostsEachLookupAtMostItsTimeoutAndOpensTheBreaker) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  // A reference duration for the same run with a healthy server.
  const auto healthy_start = Clock::now();
  run(node("healthy"), server.url(0) + "?timeout=200");
  const auto healthy = Clock::now() - healthy_start;
  ASSERT_GT(get(counters_of(node("healthy")), "tier.0.writes"), 0);

  server.freeze();
  const auto frozen_start = Clock::now();
  run(node("frozen"), server.url(1) + "?timeout=200");
  const auto frozen = Clock::now() - frozen_start;
  server.thaw();
  const auto c = counters_of(node("frozen"));
  EXPECT_GT(get(c, "stores"), 0);
  EXPECT_EQ(get(c, "errors"), 0);
  EXPECT_EQ(get(c, "tier.0.hits"), 0);
  EXPECT_GT(get(c, "tier.0.timeouts"), 0) << "the server was not frozen";
  EXPECT_TRUE(get(c, "tier.0.breaker_opened") >= 1 || get(c, "tier.0.skipped") > 0) << "the breaker never opened";
  // Generous: every compile's lookups, claim and the exit's flush each waited at most the timeout.
  const auto bound = healthy + std::chrono::milliseconds(200) * (4 * static_cast<int>(kTierScenarios.size()) + 4) +
                     std::chrono::seconds(5);
  EXPECT_LT(frozen, bound) << "frozen run " << std::chrono::duration_cast<std::chrono::milliseconds>(frozen).count()
                           << " ms, healthy " << std::chrono::duration_cast<std::chrono::milliseconds>(healthy).count()
                           << " ms";
  RecordProperty("healthy_ms", static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(healthy).count()));
  RecordProperty("frozen_ms", static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(frozen).count()));
  // Thawed, the server answers again.
  EXPECT_EQ(server.command({"PING"}).text, "PONG");
}

TEST_F(SharedRedisTier, AWrongPasswordIsPurePassThroughWithOneMessageAndNoPassword) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  const std::string wrong = "redis://:not-the-password-91c2@127.0.0.1:" + std::to_string(server.port());
  const ProcessResult cold = run(node("a"), wrong);
  EXPECT_EQ(cold.err.find("not-the-password-91c2"), std::string::npos) << cold.err;
  EXPECT_EQ(cold.err.find(server.password()), std::string::npos) << cold.err;
  EXPECT_NE(cold.err.find("password"), std::string::npos) << "no message says what is wrong: " << cold.err;
  std::size_t lines = 0;
  for (char ch : cold.err) lines += ch == '\n';
  EXPECT_EQ(lines, 1u) << cold.err;
  const auto c = counters_of(node("a"));
  EXPECT_GT(get(c, "stores"), 0);
  EXPECT_EQ(get(c, "errors"), 0);
  EXPECT_EQ(get(c, "tier.0.hits"), 0);
  EXPECT_EQ(get(c, "tier.0.writes"), 0);
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), 0);
  run(node("a"), wrong);
  EXPECT_EQ(get(counters_of(node("a")), "misses"), get(c, "misses")) << "the warm run compiled";
}

TEST_F(SharedRedisTier, AFullNoevictionServerServesReadsAndRefusesWrites) {
  RedisServerOptions options;
  options.maxmemory_policy = "noeviction";
  RedisServer server(options);
  ASSERT_TRUE(server.ok());
  const std::vector<std::string> first = {"trivial", "template"};
  const ProcessResult direct_first = probe(first, {});
  ASSERT_EQ(direct_first.exit_code, 0);
  const ProcessResult a = probe(first, node_env(node("a"), server.url()));
  EXPECT_TRUE(a.out == direct_first.out);
  const auto ca = counters_of(node("a"));
  ASSERT_GT(get(ca, "tier.0.writes"), 0);
  const long long keys = integer_of(server.command({"DBSIZE"}));
  // Full: every write is refused from now on.
  ASSERT_EQ(server.command({"CONFIG", "SET", "maxmemory", "1"}).kind, Reply::Kind::kStatus);

  run(node("b"), server.url());  // two programs in Redis, two new
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(cb, "tier.0.hits"), get(ca, "tier.0.writes")) << "reads did not work";
  EXPECT_GT(get(cb, "misses"), 0);
  EXPECT_EQ(get(cb, "tier.0.writes"), 0);
  EXPECT_GT(get(cb, "tier.0.errors") + get(cb, "tier.0.skipped"), 0) << "refused writes were not counted";
  EXPECT_EQ(get(cb, "errors"), 0);
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), keys);
}

TEST_F(SharedRedisTier, GarbageAndMacLessValuesUnderRealKeysAreMisses) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  run(node("a"), server.url());
  const std::vector<std::string> keys = data_keys(server);
  ASSERT_GE(keys.size(), 2u);
  int i = 0;
  for (const std::string& key : keys) {
    const Reply value = server.command({"GET", key});
    ASSERT_EQ(value.kind, Reply::Kind::kBulk);
    // Garbage of the same size, a value cut in the middle (its MAC or checksum gone), or empty.
    const std::string planted = i % 3 == 0   ? std::string(value.text.size(), 'G')
                                : i % 3 == 1 ? value.text.substr(0, value.text.size() / 2)
                                             : std::string();
    ++i;
    ASSERT_EQ(server.command({"SET", key, planted}).kind, Reply::Kind::kStatus);
  }
  run(node("b"), server.url());
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(cb, "tier.0.hits"), 0);
  EXPECT_GT(get(cb, "tier.0.corrupt"), 0);
  EXPECT_GT(get(cb, "misses"), 0);
  EXPECT_EQ(get(cb, "errors"), 0);
  // Node b's compiles rewrote the entries: node c is served from Redis.
  run(node("c"), server.url());
  const auto cc = counters_of(node("c"));
  EXPECT_EQ(get(cc, "misses"), 0);
  EXPECT_GT(get(cc, "tier.0.hits"), 0);
  EXPECT_EQ(get(cc, "tier.0.corrupt"), 0);
}

TEST_F(SharedRedisTier, AReadOnlyUrlNeverWrites) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  run(node("a"), server.url() + "?read-only");
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), 0) << "a read-only tier was written";
  const auto ca = counters_of(node("a"));
  EXPECT_GT(get(ca, "stores"), 0);
  EXPECT_EQ(get(ca, "tier.0.writes"), 0);
  // Filled by a writer, it serves a read-only node, which still writes nothing.
  run(node("writer"), server.url());
  const long long keys = integer_of(server.command({"DBSIZE"}));
  ASSERT_GT(keys, 0);
  run(node("b"), server.url() + "?read-only");
  EXPECT_EQ(get(counters_of(node("b")), "misses"), 0);
  EXPECT_GT(get(counters_of(node("b")), "tier.0.hits"), 0);
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), keys);
}

TEST_F(SharedRedisTier, TwoNodesOfFourProcessesCompileOneProgramOnce) {
  const ProcessResult direct = probe({"cub"}, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_NE(direct.out.find("compile rc=0"), std::string::npos);
  RedisServer server;
  ASSERT_TRUE(server.ok());
  const auto results = probes_together(8, {"cub"}, [&](int i) { return node_env(node(i % 2 ? "a" : "b"), server.url()); });
  for (const ProcessResult& r : results) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct.out) << "a process's result differs from NVRTC's";
    EXPECT_EQ(r.err, "");
  }
  const auto ca = counters_of(node("a"));
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(ca, "misses") + get(cb, "misses"), 1) << "more than one real compile across the nodes";
  EXPECT_EQ(get(ca, "stores") + get(cb, "stores"), 1);
  EXPECT_EQ(get(ca, "hits") + get(cb, "hits"), 7);
  EXPECT_GE(get(ca, "waited") + get(cb, "waited"), 1) << "no process overlapped the compile: the test proved nothing";
  // The node that did not compile was served through Redis.
  const auto& other = get(ca, "misses") == 1 ? cb : ca;
  EXPECT_GT(get(other, "tier.0.hits"), 0);
  EXPECT_EQ(get(ca, "errors") + get(cb, "errors"), 0);
}

}  // namespace
}  // namespace nvrtc_cache
