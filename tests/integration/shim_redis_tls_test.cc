// A rediss:// tier through real processes, the real NVRTC and a real redis-server serving TLS with a
// PKI the test makes (tests/support/test_certificates.h): a cold node is served from the TLS server
// byte for byte; a wrong CA is pure pass-through with one message; a Python host that uses its own
// `ssl` while the shim talks TLS in the same process keeps working (tests/data/python/
// tls_host_client.py); and a process whose tiers use no TLS never maps libssl.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/support/dynamic_section.h"
#include "tests/support/harness.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_certificates.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

const std::string kHostClient = std::string(NVRTC_CACHE_SOURCE_DIR) + "/tests/data/python/tls_host_client.py";

class ShimRedisTls : public DirectRunSuite {
 protected:
  void SetUp() override {
    DirectRunSuite::SetUp();
    ASSERT_TRUE(certificates_.ok());
    RedisServerOptions options;
    options.tls_directory = certificates_.directory();
    server_ = std::make_unique<RedisServer>(options);
    ASSERT_TRUE(server_->ok());
  }
  std::string node(const std::string& name) const { return root_.path() + "/" + name; }
  std::string url(const std::string& ca) const { return server_->tls_url() + "?tls-ca-file=" + ca; }

  TestCertificates certificates_;
  std::unique_ptr<RedisServer> server_;
};

TEST_F(ShimRedisTls, AColdNodeIsServedOverTlsExactly) {
  const ProcessResult a = probe(kTierScenarios, node_env(node("a"), url(certificates_.ca())));
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(a.out == direct_->out);
  EXPECT_EQ(a.err, "");
  const auto ca = counters_of(node("a"));
  ASSERT_GT(get(ca, "stores"), 0);
  EXPECT_EQ(get(ca, "tier.0.writes"), 2 * get(ca, "stores"));
  EXPECT_EQ(get(ca, "tier.0.errors"), 0);

  const ProcessResult b = probe(kTierScenarios, node_env(node("b"), url(certificates_.ca())));
  EXPECT_TRUE(b.out == direct_->out);
  EXPECT_EQ(b.err, "");
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(cb, "misses"), 0) << "node b compiled";
  EXPECT_EQ(get(cb, "tier.0.hits"), get(ca, "stores")) << "one result served per compile";
  EXPECT_EQ(get(cb, "tier.0.index_hits"), get(ca, "stores")) << "and one manifest";
}

TEST_F(ShimRedisTls, AWrongCaIsPassThroughWithOneMessage) {
  const ProcessResult a = probe(kTierScenarios, node_env(node("a"), url(certificates_.other_ca())));
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(a.out == direct_->out);
  EXPECT_EQ(std::count(a.err.begin(), a.err.end(), '\n'), 1) << a.err;
  EXPECT_NE(a.err.find("TLS certificate verification failed: self-signed certificate in certificate chain"),
            std::string::npos)
      << a.err;
  EXPECT_EQ(a.err.find(server_->password()), std::string::npos) << a.err;
  const auto c = counters_of(node("a"));
  EXPECT_GT(get(c, "stores"), 0);
  EXPECT_EQ(get(c, "errors"), 0);
  EXPECT_EQ(get(c, "tier.0.writes"), 0);
  EXPECT_EQ(server_->command({"DBSIZE"}).integer, 0);
}

TEST_F(ShimRedisTls, PythonsOwnTlsKeepsWorkingWhileTheShimTalksTls) {
  const std::string python = python_binary("python3");
  ASSERT_FALSE(python.empty());
  const std::vector<std::string> argv = {python, kHostClient, std::to_string(server_->tls_port()), certificates_.ca(),
                                         server_->password()};
  const ProcessResult direct = run_process(argv, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_NE(direct.out.find("host tls during: 0 failures"), std::string::npos) << direct.out;
  ASSERT_NE(direct.out.find("host tls after: b'+OK\\r\\n+PONG\\r\\n'"), std::string::npos) << direct.out;

  const ProcessResult cold = run_process(argv, node_env(node("a"), url(certificates_.ca())));
  EXPECT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_EQ(cold.out, direct.out);
  EXPECT_EQ(cold.err, "");
  const auto ca = counters_of(node("a"));
  EXPECT_EQ(get(ca, "misses"), 5);
  EXPECT_EQ(get(ca, "tier.0.writes"), 10) << "the shim's own TLS wrote every result and manifest";

  const ProcessResult warm = run_process(argv, node_env(node("b"), url(certificates_.ca())));
  EXPECT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_EQ(warm.out, direct.out);
  EXPECT_EQ(get(counters_of(node("b")), "tier.0.hits"), 5) << "the results read back over the shim's TLS";
  EXPECT_EQ(get(counters_of(node("b")), "tier.0.index_hits"), 5) << "and their manifests";
}

TEST_F(ShimRedisTls, OnlyATlsTierLoadsOpenSsl) {
  for (const std::string& library : needed_libraries(NVRTC_CACHE_SHIM_PATH))
    EXPECT_EQ(library.find("libssl"), std::string::npos) << "the shim links " << library;
  const std::string python = python_binary("python3");
  ASSERT_FALSE(python.empty());
  const std::vector<std::string> argv = {python, kHostClient, "--maps"};
  const ProcessResult plain = run_process(argv, node_env(node("plain"), server_->url()));
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("libssl mapped: no"), std::string::npos) << plain.out;
  const ProcessResult tls = run_process(argv, node_env(node("tls"), url(certificates_.ca())));
  EXPECT_EQ(tls.exit_code, 0) << tls.err;
  EXPECT_NE(tls.out.find("libssl mapped: yes"), std::string::npos) << tls.out;
}

}  // namespace
}  // namespace nvrtc_cache
