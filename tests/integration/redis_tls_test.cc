// The Redis tier over TLS (rediss://) against a real redis-server serving --tls-port with a PKI the
// test makes (tests/support/test_certificates.h): exact round trips (small and multi-MB values,
// threads), client certificates, and each certificate problem as the one clear message
// `remote check` shows: an unknown CA, a name the certificate does not hold, a plain port, a
// missing client certificate, unusable files; a frozen server's handshake costs at most the
// operation's timeout. Whether OpenSSL is loaded at all without a TLS tier: shim_redis_tls_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "store/remote/net/tls_library.h"
#include "store/remote/tier.h"
#include "tests/support/redis_server.h"
#include "tests/support/redis_tier_testing.h"
#include "tests/support/test_certificates.h"

namespace nvrtc_cache::store::remote {
namespace {

using namespace std::chrono_literals;
using namespace redis_tier_testing;
using testing::RedisServer;
using testing::RedisServerOptions;
using testing::TestCertificates;

class RedisTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { certificates_ = new TestCertificates; }
  static void TearDownTestSuite() {
    delete certificates_;
    certificates_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(certificates_->ok()); }

  static RedisServerOptions tls_options(const std::string& auth_clients = "optional") {
    RedisServerOptions options;
    options.tls_directory = certificates_->directory();
    options.tls_auth_clients = auth_clients;
    return options;
  }
  // The server's rediss:// URL with `attributes` ("tls-ca-file=...&...").
  static TierUrl url_of(const RedisServer& server, const std::string& attributes) {
    std::string problem;
    const std::string text = server.tls_url() + (attributes.empty() ? "" : "?" + attributes);
    auto url = parse_tier_url(text, &problem);
    EXPECT_TRUE(url.has_value()) << problem;
    return url.value_or(TierUrl{});
  }
  static std::unique_ptr<Tier> make_checked(const TierUrl& url) {
    std::string problem;
    const TierOptions parsed = tier_options(url, &problem);
    EXPECT_EQ(problem, "");
    return make(url, parsed);
  }
  static std::string ca() { return "tls-ca-file=" + certificates_->ca(); }

  static TestCertificates* certificates_;
};
TestCertificates* RedisTls::certificates_ = nullptr;

TEST_F(RedisTls, RoundTripsAreExactOverTls) {
  RedisServer server(tls_options());
  ASSERT_TRUE(server.ok());
  auto tier = make_checked(url_of(server, ca()));
  ASSERT_NE(tier, nullptr);
  EXPECT_EQ(tier->display_name().find(server.password()), std::string::npos) << "the password is never shown";
  EXPECT_EQ(tier->get("absent", in(kGenerous)).code, TierCode::kMiss);
  const std::string small = random_bytes(1024, 1);
  const std::string large = random_bytes(3 << 20, 2);  // many TLS records, partial writes
  ASSERT_EQ(tier->put("small", small, in(kGenerous)).code, TierCode::kOk);
  const TierResult put_large = tier->put("large", large, in(kGenerous));
  ASSERT_EQ(put_large.code, TierCode::kOk) << put_large.detail;
  for (int round = 0; round < 3; ++round) {  // pooled connections after the first
    const TierResult got_small = tier->get("small", in(kGenerous));
    ASSERT_EQ(got_small.code, TierCode::kOk) << got_small.detail;
    EXPECT_TRUE(got_small.value == small);
    const TierResult got_large = tier->get("large", in(kGenerous));
    ASSERT_EQ(got_large.code, TierCode::kOk) << got_large.detail;
    EXPECT_TRUE(got_large.value == large);
  }
  // What went over TLS is what the plain port sees.
  EXPECT_TRUE(server.command({"GET", "nvrtc-cache:v1:" + hex("large")}).text == large);
  const TierResult checked = tier->check(in(kGenerous));
  EXPECT_EQ(checked.code, TierCode::kOk) << checked.detail;
  EXPECT_NE(checked.detail.find("rediss://127.0.0.1:"), std::string::npos) << checked.detail;
}

TEST_F(RedisTls, ThreadsShareTheTierExactly) {
  RedisServer server(tls_options());
  ASSERT_TRUE(server.ok());
  auto tier = make_checked(url_of(server, ca()));
  ASSERT_NE(tier, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string key = "k" + std::to_string(t) + "-" + std::to_string(i);
        const std::string value = random_bytes(100 + 997 * i, static_cast<unsigned>(t * 100 + i));
        if (tier->put(key, value, in(kGenerous)).code != TierCode::kOk) ++wrong;
        const TierResult got = tier->get(key, in(kGenerous));
        if (got.code != TierCode::kOk || got.value != value) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(RedisTls, ClientCertificatesWhenTheServerRequiresThem) {
  RedisServer server(tls_options("yes"));
  ASSERT_TRUE(server.ok());
  auto without = make_checked(url_of(server, ca()));
  ASSERT_NE(without, nullptr);
  const TierResult refused = without->check(in(kGenerous));
  EXPECT_NE(refused.code, TierCode::kOk);
  EXPECT_NE(refused.detail.find("does it require a client certificate?"), std::string::npos) << refused.detail;

  auto with = make_checked(url_of(server, ca() + "&tls-cert-file=" + certificates_->client_cert() +
                                              "&tls-key-file=" + certificates_->client_key()));
  ASSERT_NE(with, nullptr);
  ASSERT_EQ(with->put("key", "value", in(kGenerous)).code, TierCode::kOk);
  EXPECT_EQ(with->get("key", in(kGenerous)).value, "value");
}

TEST_F(RedisTls, AnUnknownCaIsOneClearFailure) {
  RedisServer server(tls_options());
  ASSERT_TRUE(server.ok());
  auto tier = make_checked(url_of(server, "tls-ca-file=" + certificates_->other_ca()));
  ASSERT_NE(tier, nullptr);
  const TierResult got = tier->get("key", in(kGenerous));
  EXPECT_EQ(got.code, TierCode::kError);
  // (the server's chain ends in its own CA, which the client does not trust)
  EXPECT_NE(got.detail.find("TLS certificate verification failed: self-signed certificate in certificate chain "
                            "(against tls-ca-file/tls-ca-dir)"),
            std::string::npos)
      << got.detail;
  EXPECT_EQ(got.detail.find(server.password()), std::string::npos);
  const TierResult checked = tier->check(in(kGenerous));
  EXPECT_EQ(checked.detail, got.detail) << "remote check says the same";
  EXPECT_EQ(tier->put("key", "value", in(kGenerous)).code, TierCode::kError);
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), 0);
}

TEST_F(RedisTls, TheServerNameIsVerified) {
  RedisServer server(tls_options());
  ASSERT_TRUE(server.ok());
  auto wrong = make_checked(url_of(server, ca() + "&tls-server-name=cache.example.com"));
  ASSERT_NE(wrong, nullptr);
  const TierResult got = wrong->get("key", in(kGenerous));
  EXPECT_EQ(got.code, TierCode::kError);
  EXPECT_NE(got.detail.find("verification failed: hostname mismatch"), std::string::npos) << got.detail;
  auto right = make_checked(url_of(server, ca() + "&tls-server-name=localhost"));
  ASSERT_NE(right, nullptr);
  EXPECT_EQ(right->get("key", in(kGenerous)).code, TierCode::kMiss);
}

TEST_F(RedisTls, APlainPortOrUnusableFilesAreClearFailures) {
  RedisServer server(tls_options());
  ASSERT_TRUE(server.ok());
  TierUrl plain = url_of(server, ca());
  plain.port = server.port();
  auto tier = make_checked(plain);
  ASSERT_NE(tier, nullptr);
  const auto start = Clock::now();
  const TierResult got = tier->get("key", in(300ms));
  EXPECT_EQ(got.code, TierCode::kTimeout) << "a plain Redis port waits for a newline the ClientHello lacks";
  EXPECT_NE(got.detail.find("TLS handshake timed out (a frozen server, or not a TLS port?)"), std::string::npos)
      << got.detail;
  EXPECT_LT(elapsed_ms(start), 1000);

  auto missing = make_checked(url_of(server, "tls-ca-file=" + certificates_->directory() + "/absent.crt"));
  ASSERT_NE(missing, nullptr);
  const TierResult unusable = missing->check(in(kGenerous));
  EXPECT_EQ(unusable.code, TierCode::kError);
  EXPECT_NE(unusable.detail.find("tls-ca-file " + certificates_->directory() + "/absent.crt holds no usable"),
            std::string::npos)
      << unusable.detail;

  auto mismatched = make_checked(url_of(server, ca() + "&tls-cert-file=" + certificates_->client_cert() +
                                                    "&tls-key-file=" + certificates_->server_key()));
  ASSERT_NE(mismatched, nullptr);
  const std::string mismatch = mismatched->check(in(kGenerous)).detail;
  EXPECT_NE(mismatch.find("is not the key of"), std::string::npos) << mismatch;

  std::string problem;
  auto url = parse_tier_url(server.url() + "?" + ca(), &problem);
  ASSERT_TRUE(url.has_value()) << problem;
  EXPECT_EQ(make_redis_tier(*url, {}, &problem), nullptr);
  EXPECT_NE(problem.find("tls-ca-file needs a rediss:// (or rediss+cluster://) URL"), std::string::npos) << problem;
}

TEST_F(RedisTls, AFrozenServersHandshakeCostsAtMostTheTimeout) {
  RedisServer server(tls_options());
  ASSERT_TRUE(server.ok());
  auto tier = make_checked(url_of(server, ca()));
  ASSERT_NE(tier, nullptr);
  server.freeze();
  const auto start = Clock::now();
  const TierResult got = tier->get("key", in(300ms));  // the operation's timeout
  const long long took = elapsed_ms(start);
  server.thaw();
  EXPECT_EQ(got.code, TierCode::kTimeout) << got.detail;
  EXPECT_NE(got.detail.find("TLS handshake timed out"), std::string::npos) << got.detail;
  EXPECT_GE(took, 290);
  EXPECT_LT(took, 800);
  EXPECT_EQ(tier->get("key", in(kGenerous)).code, TierCode::kMiss) << "thawed: the next connection works";
}

TEST_F(RedisTls, OpenSslIsLoadedOnlyByATlsConnection) {
  // The test binary links no OpenSSL: a TLS connection loads it through the tier (each test may run in
  // a process of its own, so this one makes its own connection). A process that never connects over
  // TLS never maps libssl: ShimRedisTls checks that through /proc/self/maps.
  RedisServer server(tls_options());
  ASSERT_TRUE(server.ok());
  auto tier = make_checked(url_of(server, ca()));
  ASSERT_NE(tier, nullptr);
  EXPECT_EQ(tier->get("key", in(kGenerous)).code, TierCode::kMiss);
  EXPECT_TRUE(net::tls_library_requested());
  EXPECT_NE(net::tls_library(), nullptr);
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
