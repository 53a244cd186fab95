// The HTTP tier's URL and layouts, in-process: http:// and https:// parse with a base path, basic
// auth and a bearer token (neither ever shown), attributes that belong to other tiers are refused,
// and each layout names an entry where ccache's HTTP storage or bazel-remote would.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "store/remote/http/http_config.h"
#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote {
namespace {

std::optional<http::HttpConfig> config_of(const std::string& text, std::string* problem) {
  problem->clear();
  auto url = parse_tier_url(text, problem);
  if (!url) return std::nullopt;
  (void)tier_options(*url, problem);
  if (!problem->empty()) return std::nullopt;
  return http::http_config(*url, problem);
}

TEST(HttpTierUrl, HostPortPathAndDefaults) {
  std::string problem;
  auto plain = config_of("http://cache.lan/ccache/", &problem);
  ASSERT_TRUE(plain) << problem;
  EXPECT_FALSE(plain->tls);
  EXPECT_EQ(plain->host, "cache.lan");
  EXPECT_EQ(plain->port, 80);
  EXPECT_EQ(plain->base_path, "/ccache");
  EXPECT_EQ(plain->layout, http::Layout::kSubdirs);
  EXPECT_EQ(plain->authorization, "");
  auto tls = config_of("HTTPS://[::1]:8443?layout=bazel&tls-ca-file=/etc/ca.pem", &problem);
  ASSERT_TRUE(tls) << problem;
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->host, "::1");
  EXPECT_EQ(tls->port, 8443);
  EXPECT_EQ(tls->base_path, "");
  EXPECT_EQ(tls->layout, http::Layout::kBazel);
  EXPECT_EQ(tls->tls_settings.ca_file, "/etc/ca.pem");
  EXPECT_EQ(config_of("https://h", &problem)->port, 443);
  // An '@' in the path is written %40: the last '@' ends the user information, and "h/team@site"
  // could be a host and path or a password (refused as ambiguous, shown_url_test.cc).
  auto at = config_of("http://h/team%40site", &problem);
  ASSERT_TRUE(at) << problem;
  EXPECT_EQ(at->host, "h");
  EXPECT_EQ(at->base_path, "/team%40site");
  EXPECT_EQ(at->authorization, "");
  EXPECT_FALSE(config_of("http://h/team@site", &problem));
  EXPECT_NE(problem.find("%40"), std::string::npos) << problem;
}

TEST(HttpTierUrl, CredentialsAreSentAndNeverShown) {
  std::string problem;
  // A password's '/', '?', '#' may be written as they are (the last '@' ends it) or percent-encoded.
  auto raw = parse_tier_url("http://ci:pa/ss#w0rd@cache:8080/c", &problem);
  ASSERT_TRUE(raw) << problem;
  EXPECT_EQ(raw->password, "pa/ss#w0rd");
  EXPECT_EQ(raw->host, "cache");
  EXPECT_EQ(raw->display().find("w0rd"), std::string::npos) << raw->display();
  auto url = parse_tier_url("http://ci:p%40ss%2Fw0rd@cache:8080/c", &problem);
  ASSERT_TRUE(url) << problem;
  EXPECT_EQ(url->display().find("w0rd"), std::string::npos) << url->display();
  auto basic = http::http_config(*url, &problem);
  ASSERT_TRUE(basic) << problem;
  EXPECT_EQ(basic->authorization, "Basic " + http::base64("ci:p@ss/w0rd"));
  EXPECT_EQ(http::base64("ci:secret"), "Y2k6c2VjcmV0");
  EXPECT_EQ(http::base64("a"), "YQ==");
  EXPECT_EQ(http::base64("ab"), "YWI=");

  auto token = parse_tier_url("https://cache/c?bearer-token=tok123&layout=flat", &problem);
  ASSERT_TRUE(token) << problem;
  EXPECT_EQ(token->display().find("tok123"), std::string::npos) << token->display();
  EXPECT_NE(token->display().find("bearer-token=***"), std::string::npos) << token->display();
  EXPECT_EQ(http::http_config(*token, &problem)->authorization, "Bearer tok123");
  // A URL that does not parse is shown without its token either.
  EXPECT_FALSE(parse_tier_url("https://cache/c?bearer-token=tok456&bad=%zz", &problem));
  EXPECT_EQ(problem.find("tok456"), std::string::npos) << problem;

  std::string dir = (std::filesystem::temp_directory_path() / "http-tier-url-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  std::ofstream(dir + "/token") << "from-file\n";
  auto file = config_of("https://cache?bearer-token-file=" + dir + "/token", &problem);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(file) << problem;
  EXPECT_EQ(file->authorization, "Bearer from-file");
}

TEST(HttpTierUrl, MalformedOrMisplacedAttributesAreRefused) {
  for (const std::string bad :
       {"http://", "http://h?layout=nested", "http://h?tls-ca-file=/ca.pem", "https://h?tls-ca-file=relative.pem",
        "https://h?tls-cert-file=/c.pem", "http://u:p@h?bearer-token=t", "http://h?bearer-token=a&bearer-token-file=/t",
        "http://h?bearer-token-file=/nonexistent/token", "http://h/a b"}) {
    std::string problem;
    EXPECT_FALSE(config_of(bad, &problem)) << bad;
    EXPECT_NE(problem, "") << bad;
  }
  std::string problem;
  auto url = parse_tier_url("http://h?db=1", &problem);  // a Redis attribute
  ASSERT_TRUE(url);
  (void)tier_options(*url, &problem);
  EXPECT_NE(problem.find("unknown attribute 'db'"), std::string::npos) << problem;
  problem.clear();
  auto redis = parse_tier_url("redis://h?layout=flat", &problem);
  ASSERT_TRUE(redis);
  (void)tier_options(*redis, &problem);
  EXPECT_NE(problem.find("unknown attribute 'layout'"), std::string::npos) << problem;
}

TEST(HttpTierUrl, LayoutsNameEntriesAsCcacheAndBazelRemoteDo) {
  http::HttpConfig config;
  config.base_path = "/base";
  const std::string subdirs = http::entry_target(config, "nvrtc-cache", "some key");
  EXPECT_TRUE(std::regex_match(subdirs, std::regex("/base/nvrtc-cache/[0-9a-f]{2}/[0-9a-f]{62}"))) << subdirs;
  config.layout = http::Layout::kFlat;
  const std::string flat = http::entry_target(config, "nvrtc-cache", "some key");
  EXPECT_TRUE(std::regex_match(flat, std::regex("/base/nvrtc-cache/[0-9a-f]{64}"))) << flat;
  // subdirs splits the same digest flat uses.
  EXPECT_EQ(subdirs.substr(18, 2) + subdirs.substr(21), flat.substr(18));
  config.layout = http::Layout::kBazel;
  const std::string bazel = http::entry_target(config, "nvrtc-cache", "some key");
  EXPECT_TRUE(std::regex_match(bazel, std::regex("/base/ac/[0-9a-f]{64}"))) << bazel;
  EXPECT_NE(bazel, http::entry_target(config, "other-prefix", "some key")) << "the prefix separates bazel entries";
  EXPECT_NE(bazel, http::entry_target(config, "nvrtc-cache", "other key"));
}

TEST(HttpTierUrl, MakeTierBuildsAnHttpTierWithoutConnecting) {
  std::string problem;
  auto url = parse_tier_url("http://127.0.0.1:9/x?read-only", &problem);
  ASSERT_TRUE(url);
  auto tier = make_tier(*url, tier_options(*url, &problem), &problem);
  ASSERT_NE(tier, nullptr) << problem;
  EXPECT_FALSE(tier->writable());
  EXPECT_EQ(tier->try_claim("k", "t", std::chrono::milliseconds(100), Clock::now(), nullptr), ClaimCode::kUnsupported);
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
