// The HTTP tier (http://, https://) against a real nginx serving WebDAV PUT/DELETE that the tests
// start (tests/support/nginx_server.h): exact round trips (small and multi-MB values, pooled
// connections, threads), the entries' places on disk for each layout (ccache's subdirs and flat,
// bazel-remote's ac/), PUTs that replace, basic auth and a bearer token (never shown), read-only,
// the server's error answers (403, 500, a redirect), TLS with a test CA, and `remote check`.
// Misbehaving servers (truncated and slow bodies, resets, garbage): http_tier_failures_test.cc.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "store/remote/http/http_config.h"
#include "store/remote/tier.h"
#include "tests/support/nginx_server.h"
#include "tests/support/redis_tier_testing.h"
#include "tests/support/test_certificates.h"

namespace nvrtc_cache::store::remote {
namespace {

using namespace std::chrono_literals;
using redis_tier_testing::in;
using redis_tier_testing::kGenerous;
using redis_tier_testing::random_bytes;
using testing::NginxServer;
using testing::NginxServerOptions;
using testing::TestCertificates;
namespace fs = std::filesystem;

std::unique_ptr<Tier> make_http(const std::string& text, std::string* problem_out = nullptr) {
  std::string problem;
  auto url = parse_tier_url(text, &problem);
  EXPECT_TRUE(url.has_value()) << problem;
  if (!url) return nullptr;
  const TierOptions options = tier_options(*url, &problem);
  EXPECT_EQ(problem, "");
  auto tier = make_tier(*url, options, &problem);
  if (problem_out) *problem_out = problem;
  return tier;
}

std::size_t count_requests(const NginxServer& server, const std::string& method) {
  std::size_t n = 0;
  for (const std::string& line : server.requests()) n += line.rfind(method + " ", 0) == 0;
  return n;
}

TEST(HttpTier, RoundTripsAreExactOverPooledConnections) {
  NginxServer server;
  ASSERT_TRUE(server.ok());
  auto tier = make_http(server.url() + "/cache");
  ASSERT_NE(tier, nullptr);
  EXPECT_EQ(tier->get("absent", in(kGenerous)).code, TierCode::kMiss);
  const std::string small = random_bytes(1024, 1);
  const std::string large = random_bytes(5 << 20, 2);
  ASSERT_EQ(tier->put("small", small, in(kGenerous)).code, TierCode::kOk);
  const TierResult put_large = tier->put("large", large, in(kGenerous));
  ASSERT_EQ(put_large.code, TierCode::kOk) << put_large.detail;
  for (int round = 0; round < 3; ++round) {
    const TierResult a = tier->get("small", in(kGenerous));
    ASSERT_EQ(a.code, TierCode::kOk) << a.detail;
    EXPECT_TRUE(a.value == small);
    const TierResult b = tier->get("large", in(kGenerous));
    ASSERT_EQ(b.code, TierCode::kOk) << b.detail;
    EXPECT_TRUE(b.value == large);
  }
  const TierResult checked = tier->check(in(kGenerous));
  EXPECT_EQ(checked.code, TierCode::kOk) << checked.detail;
}

TEST(HttpTier, ThreadsShareTheTierExactly) {
  NginxServer server;
  ASSERT_TRUE(server.ok());
  auto tier = make_http(server.url());
  ASSERT_NE(tier, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const std::string key = "key-" + std::to_string((t * 7 + i) % 50);
        const std::string value = random_bytes(2000 + (t * 7 + i) % 50 * 100, static_cast<unsigned>((t * 7 + i) % 50));
        if (tier->put(key, value, in(kGenerous)).code != TierCode::kOk) ++wrong;
        const TierResult got = tier->get(key, in(kGenerous));
        if (got.code != TierCode::kOk || got.value != value) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(HttpTier, LayoutsPlaceEntriesWhereCcacheAndBazelRemoteExpectThem) {
  NginxServer server;
  ASSERT_TRUE(server.ok());
  const std::string value = random_bytes(300, 3);
  for (const std::string layout : {"subdirs", "flat", "bazel"}) {
    auto tier = make_http(server.url() + "/team?layout=" + layout + "&prefix=p1");
    ASSERT_NE(tier, nullptr);
    ASSERT_EQ(tier->put("the key", value, in(kGenerous)).code, TierCode::kOk);
  }
  const std::string data = server.data_directory() + "/team";
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(data)) {
    if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), data).string());
  }
  ASSERT_EQ(files.size(), 3u);
  const std::regex subdirs("p1/[0-9a-f]{2}/[0-9a-f]{62}"), flat("p1/[0-9a-f]{64}"), bazel("ac/[0-9a-f]{64}");
  int matched = 0;
  for (const std::string& f : files) {
    matched += std::regex_match(f, subdirs) + std::regex_match(f, flat) + std::regex_match(f, bazel);
    EXPECT_EQ(testing::read_file(data + "/" + f), value) << f;
  }
  EXPECT_EQ(matched, 3) << "places: " << files[0] << " " << files[1] << " " << files[2];
  // The subdirs and flat names are one digest, split or not.
  http::HttpConfig config;
  EXPECT_TRUE(fs::exists(data + http::entry_target(config, "p1", "the key")));
}

TEST(HttpTier, APutReplacesTheEntryWithoutAskingHeadFirst) {
  // Every write overwrites: a manifest grows under its key, and a value found wrong is repaired by
  // the next write of its key (a HEAD that found something there would prevent both).
  NginxServer server;
  ASSERT_TRUE(server.ok());
  auto writer = make_http(server.url());
  auto other = make_http(server.url());
  ASSERT_EQ(writer->put("k", "value one", in(kGenerous)).code, TierCode::kOk);
  ASSERT_EQ(other->put("k", "value two", in(kGenerous)).code, TierCode::kOk);
  EXPECT_EQ(writer->get("k", in(kGenerous)).value, "value two");
  EXPECT_EQ(count_requests(server, "PUT"), 2u);
  EXPECT_EQ(count_requests(server, "HEAD"), 0u);
}

TEST(HttpTier, BasicAuthFromTheUrlIsSentAndNeverShown) {
  NginxServerOptions options;
  options.user = "builder";
  options.password = "pw-Zk81/q";
  NginxServer server(options);
  ASSERT_TRUE(server.ok());
  const std::string host = server.url().substr(std::string("http://").size());
  auto tier = make_http("http://builder:pw-Zk81%2Fq@" + host + "/c");
  ASSERT_NE(tier, nullptr);
  EXPECT_EQ(tier->display_name().find("pw-Zk81"), std::string::npos) << tier->display_name();
  ASSERT_EQ(tier->put("k", "v", in(kGenerous)).code, TierCode::kOk);
  EXPECT_EQ(tier->get("k", in(kGenerous)).value, "v");
  auto raw = make_http("http://builder:pw-Zk81/q@" + host + "/c");  // the '/' as written: the last '@' ends it
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->display_name().find("pw-Zk81"), std::string::npos) << raw->display_name();
  EXPECT_EQ(raw->get("k", in(kGenerous)).value, "v");
  auto wrong = make_http("http://builder:wrong@" + host + "/c");
  const TierResult refused = wrong->get("k", in(kGenerous));
  EXPECT_EQ(refused.code, TierCode::kRefused) << refused.detail;
  EXPECT_NE(refused.detail.find("401"), std::string::npos) << refused.detail;
  EXPECT_EQ(refused.detail.find("wrong"), std::string::npos) << "the password is shown: " << refused.detail;
  auto none = make_http(server.url() + "/c");
  EXPECT_EQ(none->check(in(kGenerous)).code, TierCode::kRefused);
}

TEST(HttpTier, ABearerTokenIsSentAndNeverShown) {
  NginxServerOptions options;
  options.bearer_token = "tok-5d1e9a";
  NginxServer server(options);
  ASSERT_TRUE(server.ok());
  auto tier = make_http(server.url() + "?bearer-token=tok-5d1e9a");
  ASSERT_NE(tier, nullptr);
  EXPECT_EQ(tier->display_name().find("tok-5d1e9a"), std::string::npos) << tier->display_name();
  const TierResult checked = tier->check(in(kGenerous));
  EXPECT_EQ(checked.code, TierCode::kOk) << checked.detail;
  // From a file (a token read once, its newline dropped).
  testing::TempDir dir;
  std::ofstream(dir.path() + "/token") << "tok-5d1e9a\n";
  auto from_file = make_http(server.url() + "?bearer-token-file=" + dir.path() + "/token");
  ASSERT_NE(from_file, nullptr);
  EXPECT_EQ(from_file->check(in(kGenerous)).code, TierCode::kOk);
  auto wrong = make_http(server.url() + "?bearer-token=other");
  const TierResult refused = wrong->put("k", "v", in(kGenerous));
  EXPECT_EQ(refused.code, TierCode::kRefused) << refused.detail;
}

TEST(HttpTier, AReadOnlyTierReadsAndNeverWrites) {
  NginxServer server;
  ASSERT_TRUE(server.ok());
  auto writer = make_http(server.url());
  ASSERT_EQ(writer->put("k", "v", in(kGenerous)).code, TierCode::kOk);
  const std::size_t puts = count_requests(server, "PUT");
  auto reader = make_http(server.url() + "?read-only");
  EXPECT_FALSE(reader->writable());
  EXPECT_EQ(reader->get("k", in(kGenerous)).value, "v");
  EXPECT_EQ(reader->put("k2", "v", in(kGenerous)).code, TierCode::kRefused);
  EXPECT_EQ(reader->check(in(kGenerous)).code, TierCode::kOk);
  EXPECT_EQ(count_requests(server, "PUT"), puts);
  EXPECT_EQ(count_requests(server, "DELETE"), 0u);
}

TEST(HttpTier, ServerErrorsAreRefusalsOrErrorsAndRedirectsAreNotFollowed) {
  NginxServer server;
  ASSERT_TRUE(server.ok());
  const TierResult forbidden = make_http(server.url() + "/status/403")->get("k", in(kGenerous));
  EXPECT_EQ(forbidden.code, TierCode::kRefused) << forbidden.detail;
  const TierResult failing = make_http(server.url() + "/status/500")->get("k", in(kGenerous));
  EXPECT_EQ(failing.code, TierCode::kError) << failing.detail;
  EXPECT_NE(failing.detail.find("HTTP 500"), std::string::npos) << failing.detail;
  const TierResult put_failing = make_http(server.url() + "/status/503")->put("k", "v", in(kGenerous));
  EXPECT_EQ(put_failing.code, TierCode::kError) << put_failing.detail;
  const TierResult moved = make_http(server.url() + "/status/302")->get("k", in(kGenerous));
  EXPECT_EQ(moved.code, TierCode::kError);
  EXPECT_NE(moved.detail.find("redirects are not followed"), std::string::npos) << moved.detail;
  EXPECT_NE(moved.detail.find("elsewhere.invalid"), std::string::npos) << moved.detail;
  EXPECT_EQ(count_requests(server, "GET"), 3u) << "a redirect was followed";
}

class HttpsTier : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { certificates_ = new TestCertificates; }
  static void TearDownTestSuite() {
    delete certificates_;
    certificates_ = nullptr;
  }
  static TestCertificates* certificates_;
};
TestCertificates* HttpsTier::certificates_ = nullptr;

TEST_F(HttpsTier, RoundTripsAreExactOverTlsAndTheCertificateIsVerified) {
  ASSERT_TRUE(certificates_->ok());
  NginxServerOptions options;
  options.tls_directory = certificates_->directory();
  NginxServer server(options);
  ASSERT_TRUE(server.ok());
  auto tier = make_http(server.url() + "/c?tls-ca-file=" + certificates_->ca());
  ASSERT_NE(tier, nullptr);
  const std::string large = random_bytes(3 << 20, 4);
  const TierResult put = tier->put("large", large, in(kGenerous));
  ASSERT_EQ(put.code, TierCode::kOk) << put.detail;
  for (int round = 0; round < 3; ++round) {
    const TierResult got = tier->get("large", in(kGenerous));
    ASSERT_EQ(got.code, TierCode::kOk) << got.detail;
    EXPECT_TRUE(got.value == large);
  }
  EXPECT_EQ(tier->check(in(kGenerous)).code, TierCode::kOk);
  auto untrusted = make_http(server.url() + "/c?tls-ca-file=" + certificates_->other_ca());
  const TierResult refused = untrusted->get("large", in(kGenerous));
  EXPECT_EQ(refused.code, TierCode::kError);
  EXPECT_NE(refused.detail.find("certificate verification failed"), std::string::npos) << refused.detail;
  // A plain-HTTP client at the TLS port, and a TLS client at a plain port, fail clearly and fast.
  NginxServer plain;
  ASSERT_TRUE(plain.ok());
  const std::string plain_host = plain.url().substr(std::string("http://").size());
  auto mismatched = make_http("https://" + plain_host + "?tls-ca-file=" + certificates_->ca());
  const TierResult wrong_port = mismatched->get("k", in(kGenerous));
  EXPECT_EQ(wrong_port.code, TierCode::kError) << wrong_port.detail;
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
