// A shared HTTP tier through real processes, the real NVRTC and a real nginx (tests/support/
// nginx_server.h): "nodes" are separate cache directories sharing one server (NVRTC_CACHE_REMOTE=
// http://... or https://...). Every result is compared byte for byte with NVRTC's. The HTTP tier
// cannot claim, so processes of several nodes may each compile a program once (no cross-node
// single-flight); within a node, the node-local claim still holds. Hostile servers (floods without
// end) cost a compile at most the tier's timeout and no memory past max-entry-size.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/flood_server.h"
#include "tests/support/harness.h"
#include "tests/support/measured_probe.h"
#include "tests/support/nginx_server.h"
#include "tests/support/test_certificates.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
namespace fs = std::filesystem;

std::map<std::string, std::string> files_under(const std::string& dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_regular_file()) files[it->path().string()] = read_file(it->path().string());
  }
  return files;
}

class SharedHttpTier : public DirectRunSuite {
 protected:
  std::string node(const std::string& name) const { return root_.path() + "/" + name; }
  ProcessResult run(const std::string& node_dir, const std::string& remote, const std::string& secret = "") {
    ProcessResult r = probe(kTierScenarios, node_env(node_dir, remote, secret));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct_->out) << "a result differs from NVRTC's";
    return r;
  }
  // A cold node fills the tier; a second cold node is served from it alone; then from its own store.
  void served_from_the_tier(const std::string& remote) {
    const ProcessResult a = run(node("a"), remote);
    EXPECT_EQ(a.err, "");
    const auto ca = counters_of(node("a"));
    ASSERT_GT(get(ca, "stores"), 0);
    EXPECT_EQ(get(ca, "tier.0.writes"), 2 * get(ca, "stores")) << "a result and a manifest per store";
    EXPECT_EQ(get(ca, "tier.0.errors"), 0);
    const ProcessResult b = run(node("b"), remote);
    EXPECT_EQ(b.err, "");
    const auto cb = counters_of(node("b"));
    EXPECT_EQ(get(cb, "misses"), 0) << "node b compiled";
    EXPECT_EQ(get(cb, "tier.0.hits"), get(ca, "stores")) << "one result served per compile";
    EXPECT_EQ(get(cb, "tier.0.index_hits"), get(ca, "stores")) << "and one manifest";
    EXPECT_EQ(get(cb, "tier.0.writes"), 0);
    run(node("b"), remote);
    EXPECT_EQ(get(counters_of(node("b")), "tier.0.hits"), get(cb, "tier.0.hits")) << "the second run was not local";
  }
};

TEST_F(SharedHttpTier, AColdNodeIsServedFromTheHttpTierThenFromItsOwnStore) {
  NginxServer server;
  ASSERT_TRUE(server.ok());
  served_from_the_tier(server.url() + "/cache");
  EXPECT_FALSE(files_under(server.data_directory() + "/cache/nvrtc-cache").empty()) << "subdirs layout, default prefix";
}

TEST_F(SharedHttpTier, AColdNodeIsServedOverHttpsWithBasicAuth) {
  TestCertificates certificates;
  ASSERT_TRUE(certificates.ok());
  NginxServerOptions options;
  options.tls_directory = certificates.directory();
  options.user = "ci";
  options.password = "s3cret-http-77";
  NginxServer server(options);
  ASSERT_TRUE(server.ok());
  const std::string host = server.url().substr(std::string("https://").size());
  served_from_the_tier("https://ci:s3cret-http-77@" + host + "/cache?layout=bazel&tls-ca-file=" + certificates.ca());
  EXPECT_FALSE(files_under(server.data_directory() + "/cache/ac").empty());
}

TEST_F(SharedHttpTier, WithASecretTamperedAndUnsignedValuesAreRejectedAndReplaced) {
  NginxServer server;
  ASSERT_TRUE(server.ok());
  const std::string secret = root_.path() + "/secret";
  std::ofstream(secret) << "the fleet's shared secret\n";
  ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
  run(node("a"), server.url(), secret);
  auto files = files_under(server.data_directory());
  ASSERT_GE(files.size(), 2u);
  for (const auto& [path, bytes] : files) {  // one byte of each payload changed, sizes kept
    std::string tampered = bytes;
    tampered[tampered.size() / 2] ^= 0x20;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << tampered;
  }
  run(node("b"), server.url(), secret);
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(cb, "tier.0.hits"), 0);
  EXPECT_GT(get(cb, "tier.0.mac_rejected") + get(cb, "tier.0.corrupt"), 0);
  EXPECT_GT(get(cb, "misses"), 0);
  EXPECT_EQ(get(cb, "errors"), 0);
  // Node b's compiles overwrote them (a PUT always replaces); node c is served.
  run(node("c"), server.url(), secret);
  const auto cc = counters_of(node("c"));
  EXPECT_EQ(get(cc, "misses"), 0);
  EXPECT_GT(get(cc, "tier.0.hits"), 0);
  // Without the secret's MAC (an unsigned writer), a node with the secret trusts nothing.
  run(node("unsigned"), server.url() + "/other");
  run(node("d"), server.url() + "/other", secret);
  const auto cd = counters_of(node("d"));
  EXPECT_GT(get(cd, "tier.0.mac_rejected"), 0);
  EXPECT_EQ(get(cd, "tier.0.hits"), 0);
}

TEST_F(SharedHttpTier, AReadOnlyUrlNeverWrites) {
  NginxServer server;
  ASSERT_TRUE(server.ok());
  run(node("a"), server.url() + "?read-only");
  EXPECT_TRUE(files_under(server.data_directory()).empty());
  run(node("writer"), server.url());
  const auto before = files_under(server.data_directory());
  ASSERT_FALSE(before.empty());
  run(node("b"), server.url() + "?read-only");
  EXPECT_EQ(get(counters_of(node("b")), "misses"), 0);
  EXPECT_TRUE(files_under(server.data_directory()) == before);
}

TEST_F(SharedHttpTier, ADeadServerIsPassThroughAndOpensTheBreaker) {
  const std::uint16_t port = free_loopback_tcp_port();  // nobody listens
  const ProcessResult r = run(node("a"), "http://127.0.0.1:" + std::to_string(port) + "/cache?timeout=200");
  const auto c = counters_of(node("a"));
  EXPECT_GT(get(c, "stores"), 0);
  EXPECT_EQ(get(c, "errors"), 0);
  EXPECT_EQ(get(c, "tier.0.hits"), 0);
  EXPECT_TRUE(get(c, "tier.0.breaker_opened") >= 1 || get(c, "tier.0.skipped") > 0) << "the breaker never opened";
  std::size_t lines = 0;
  for (char ch : r.err) lines += ch == '\n';
  EXPECT_LE(lines, 1u) << "one message for a dead tier: " << r.err;
}

TEST_F(SharedHttpTier, EightProcessesOfTwoNodesShareTheTierExactly) {
  NginxServer server;
  ASSERT_TRUE(server.ok());
  std::vector<ProcessResult> results(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      results[static_cast<std::size_t>(i)] = probe(kTierScenarios, node_env(node(i % 2 ? "a" : "b"), server.url()));
    });
  }
  for (auto& t : threads) t.join();
  for (const ProcessResult& r : results) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct_->out) << "a process's result differs from NVRTC's";
    EXPECT_EQ(r.err, "");
  }
  const auto ca = counters_of(node("a"));
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(ca, "errors") + get(cb, "errors"), 0);
  EXPECT_EQ(get(ca, "tier.0.errors") + get(cb, "tier.0.errors"), 0);
  // A node compiles each program at most once (node-local single-flight); the tier cannot claim.
  EXPECT_LE(get(ca, "stores"), static_cast<std::int64_t>(kTierScenarios.size()) * 2);
  run(node("c"), server.url());
  EXPECT_EQ(get(counters_of(node("c")), "misses"), 0) << "a third node was not served from the tier";
}

// Hostile HTTP servers (tests/support/flood_server.h: every connection flooded without end) against
// whole compiles: every result is NVRTC's, the process ends well, it takes at most the tier's
// timeout (1 s) + 1.5 s longer than against a closed port, and its peak memory is at most
// max-entry-size (64 MiB) + 32 MiB above that run's.
TEST_F(SharedHttpTier, HostileServersCostACompileItsTimeoutAtMostAndNoMemoryPastTheCap) {
  if (!MeasuredRun::available()) GTEST_SKIP() << "GNU time (/usr/bin/time) is not installed";
  const std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  struct Case {
    const char* name;
    std::string first, piece;
    std::chrono::microseconds pause{0};
  };
  const std::vector<Case> cases{
      {"1xx flood", "", "HTTP/1.1 100 Continue\r\n\r\n"},
      {"trickled chunk extensions", chunked + "5", ";name=value", std::chrono::microseconds(200)},
      {"flooded chunk extensions", chunked + "5", ";name=value"},
      // ~110 KB/s: each read ends at the parser's 80 KiB limit just before the deadline, an error
      // that cost about a timeout (the breaker opens at the first, not the third).
      {"chunk extensions trickled to the limit", chunked + "5", ";a=value;b=value;c=value;d=value;e=value;f=value",
       std::chrono::microseconds(550)},
      {"endless chunked body", chunked, "10000\r\n" + std::string(0x10000, 'c') + "\r\n"},
  };
  const std::uint16_t closed = free_loopback_tcp_port();
  const MeasuredRun base =
      measured_probe(kTierScenarios, node_env(node("base"), "http://127.0.0.1:" + std::to_string(closed) + "/cache"));
  ASSERT_EQ(base.result.exit_code, 0) << base.result.err;
  ASSERT_GT(base.peak_bytes, 0u) << "no measurement from /usr/bin/time";
  std::fprintf(stderr, "closed port: %.2f s, peak RSS %.1f MiB\n", base.seconds,
               static_cast<double>(base.peak_bytes) / (1 << 20));
  int i = 0;
  for (const Case& c : cases) {
    testing::FloodServer server(c.first, c.piece, c.pause);
    ASSERT_TRUE(server.ok());
    const MeasuredRun m =
        measured_probe(kTierScenarios, node_env(node("n" + std::to_string(i++)), server.url("/cache")));
    std::fprintf(stderr, "%s: %.2f s (+%.2f), peak RSS %.1f MiB (%+.1f)\n", c.name, m.seconds, m.seconds - base.seconds,
                 static_cast<double>(m.peak_bytes) / (1 << 20),
                 (static_cast<double>(m.peak_bytes) - static_cast<double>(base.peak_bytes)) / (1 << 20));
    EXPECT_EQ(m.result.exit_code, 0) << c.name << ": " << m.result.err;
    EXPECT_TRUE(m.result.out == direct_->out) << c.name << ": a result differs from NVRTC's";
    EXPECT_LT(m.seconds, base.seconds + 1.0 + 1.5) << c.name;
    EXPECT_LT(m.peak_bytes, base.peak_bytes + (64u << 20) + (32u << 20)) << c.name;
    EXPECT_GT(server.accepted(), 0) << c.name << ": the tier never asked the server";
  }
}

}  // namespace
}  // namespace nvrtc_cache
