// A redis+cluster:// tier through real processes, the real NVRTC and a real 6-node Redis Cluster
// (tests/support/redis_cluster.h): a cold node is served from the cluster byte for byte; 2 nodes x 8
// processes compile one CUB kernel once through it (the claim and the value share a slot); and a
// master killed between two runs leaves the next run exact and no slower than one timeout per
// compile; a hostile node's 16 MB slot map costs a compile at most its timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/flood_server.h"
#include "tests/support/harness.h"
#include "tests/support/measured_probe.h"
#include "tests/support/nginx_server.h"
#include "tests/support/redis_cluster.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;

class ShimRedisCluster : public DirectRunSuite {
 protected:
  std::string node(const std::string& name) const { return root_.path() + "/" + name; }
};

TEST_F(ShimRedisCluster, AColdNodeIsServedFromTheClusterExactly) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok());
  const ProcessResult a = probe(kTierScenarios, node_env(node("a"), cluster.url()));
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(a.out == direct_->out);
  EXPECT_EQ(a.err, "");
  const auto ca = counters_of(node("a"));
  ASSERT_GT(get(ca, "stores"), 0);
  EXPECT_EQ(get(ca, "tier.0.writes"), 2 * get(ca, "stores"));
  EXPECT_EQ(get(ca, "tier.0.errors"), 0);

  const ProcessResult b = probe(kTierScenarios, node_env(node("b"), cluster.url()));
  EXPECT_TRUE(b.out == direct_->out);
  EXPECT_EQ(b.err, "");
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(cb, "misses"), 0) << "node b compiled";
  EXPECT_EQ(get(cb, "tier.0.hits"), get(ca, "stores")) << "one result served per compile";
  EXPECT_EQ(get(cb, "tier.0.index_hits"), get(ca, "stores")) << "and one manifest";
}

TEST_F(ShimRedisCluster, TwoNodesOfEightProcessesCompileOneProgramOnce) {
  const ProcessResult direct = probe({"cub"}, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok());
  std::vector<ProcessResult> results(16);
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      results[static_cast<std::size_t>(i)] = probe({"cub"}, node_env(node(i % 2 ? "a" : "b"), cluster.url()));
    });
  }
  for (auto& thread : threads) thread.join();
  for (const ProcessResult& r : results) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct.out) << "a process's result differs from NVRTC's";
    EXPECT_EQ(r.err, "");
  }
  const auto ca = counters_of(node("a"));
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(ca, "misses") + get(cb, "misses"), 1) << "more than one real compile across the nodes";
  EXPECT_EQ(get(ca, "hits") + get(cb, "hits"), 15);
  EXPECT_GE(get(ca, "waited") + get(cb, "waited"), 1) << "no process overlapped the compile: the test proved nothing";
  EXPECT_EQ(get(ca, "errors") + get(cb, "errors"), 0);
}

TEST_F(ShimRedisCluster, AKilledMasterLeavesTheNextRunExact) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok());
  const std::string remote = cluster.url() + "?timeout=300";
  const ProcessResult a = probe(kTierScenarios, node_env(node("a"), remote));
  EXPECT_TRUE(a.out == direct_->out);
  const std::vector<int> masters = cluster.masters();
  ASSERT_EQ(masters.size(), 3u);
  cluster.node(masters[1]).kill9();  // a master other than the seed
  const auto start = Clock::now();
  const ProcessResult b = probe(kTierScenarios, node_env(node("b"), remote));
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_TRUE(b.out == direct_->out) << "a result differs from NVRTC's";
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(cb, "errors"), 0);
  EXPECT_EQ(get(cb, "tier.0.timeouts"), 0) << "a refused connection is not a timeout";
  // Results or manifests: which keys live on the killed master is the slot map's choice.
  EXPECT_GT(get(cb, "tier.0.hits") + get(cb, "tier.0.index_hits"), 0) << "the live masters still served their keys";
  // 4 compiles, each waiting at most one 300 ms timeout, plus the compiles themselves.
  EXPECT_LT(took, 4 * 300 + 10'000) << took << " ms";
}

// A hostile node (tests/support/flood_server.h) whose CLUSTER NODES reply is ~16 MB, one range
// repeated: every result is NVRTC's, the process ends well, takes at most the tier's timeout (1 s)
// + 1.5 s longer than against a closed port, and peaks at most max-entry-size + 32 MiB higher.
TEST_F(ShimRedisCluster, AHugeSlotMapCostsACompileItsTimeoutAtMostAndNoMemory) {
  if (!MeasuredRun::available()) GTEST_SKIP() << "GNU time (/usr/bin/time) is not installed";
  std::string map = "0123456789abcdef0123456789abcdef01234567 127.0.0.1:1@2 myself,master - 0 0 1 connected";
  while (map.size() < 16'000'000) map += " 0-16383";
  map += "\n";
  FloodServer node_of_16mb("$" + std::to_string(map.size()) + "\r\n" + map + "\r\n", "", {}, "\r\n");
  ASSERT_TRUE(node_of_16mb.ok());
  const std::uint16_t closed = free_loopback_tcp_port();
  const MeasuredRun base =
      measured_probe(kTierScenarios, node_env(node("base"), "redis+cluster://127.0.0.1:" + std::to_string(closed)));
  ASSERT_EQ(base.result.exit_code, 0) << base.result.err;
  ASSERT_GT(base.peak_bytes, 0u) << "no measurement from /usr/bin/time";
  const MeasuredRun m = measured_probe(
      kTierScenarios, node_env(node("a"), "redis+cluster://127.0.0.1:" + std::to_string(node_of_16mb.port())));
  std::fprintf(stderr, "closed port: %.2f s, %.1f MiB; 16 MB CLUSTER NODES: %.2f s, %.1f MiB\n", base.seconds,
               static_cast<double>(base.peak_bytes) / (1 << 20), m.seconds,
               static_cast<double>(m.peak_bytes) / (1 << 20));
  EXPECT_EQ(m.result.exit_code, 0) << m.result.err;
  EXPECT_TRUE(m.result.out == direct_->out) << "a result differs from NVRTC's";
  EXPECT_LT(m.seconds, base.seconds + 1.0 + 1.5);
  EXPECT_LT(m.peak_bytes, base.peak_bytes + (64u << 20) + (32u << 20));
  EXPECT_GT(node_of_16mb.accepted(), 0) << "the tier never asked the node";
}

}  // namespace
}  // namespace nvrtc_cache
