// shown_url, the one rendering of a tier URL for people, and the parser's rule for user
// information it follows: every URL kind with passwords holding '/', '?', '#', '@' or
// percent-encoding is parsed with the password whole and never shown (display(), shown_url,
// shown_urls, problems), and an ambiguous URL is refused without showing it either.
#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "store/remote/percent_encoding.h"
#include "store/remote/shown_url.h"
#include "store/remote/tier.h"
#include "store/remote/url_user_information.h"

namespace nvrtc_cache::store::remote {
namespace {

// Passwords as written in a URL; each piece between its special characters is distinctive, so a
// piece of one showing anywhere is a leak.
const std::vector<std::string> kPasswords = {
    "Qm9vc2Vy/YmFzZTY0+Lw==",  // base64
    "tr7x?qp4k#zu9w",          // '?' and '#'
    "ka3m/vb8n@wq5e",          // '/' and '@'
    "hj2r/?#@lm6t",            // all four
    "dy4f%2Fce1p%40gz8s%23",   // percent-encoded: "dy4f/ce1p@gz8s#"
};

// The pieces of `password` (as written and percent-decoded) that must not show.
std::vector<std::string> pieces_of(const std::string& password) {
  std::vector<std::string> out = {password};
  if (const auto decoded = percent_decode(password)) out.push_back(*decoded);
  std::string piece;
  for (char c : password + "/") {
    if (std::string_view("/?#@%+=").find(c) != std::string_view::npos) {
      if (piece.size() >= 4) out.push_back(piece);
      piece.clear();
    } else {
      piece.push_back(c);
    }
  }
  return out;
}

void expect_hidden(const std::string& shown, const std::string& password, const std::string& where) {
  for (const std::string& piece : pieces_of(password)) {
    EXPECT_EQ(shown.find(piece), std::string::npos) << where << " shows '" << piece << "': " << shown;
  }
}

// One URL of each kind the parser knows, with `userinfo` (USER:PASSWORD or PASSWORD).
std::vector<std::string> urls_with(const std::string& userinfo) {
  return {
      "redis://" + userinfo + "@cache.example:6380/2?timeout=500",
      "rediss://" + userinfo + "@cache.example:6380?tls-ca-file=/etc/ca.pem",
      "redis+unix://" + userinfo + "@/run/redis.sock?db=1",
      "redis+cluster://" + userinfo + "@node1.example:7000?seeds=node2.example:7001",
      "rediss+cluster://" + userinfo + "@node1.example:7000",
      "redis://" + userinfo + "@cache-*.lan?shards=1,2",
      "http://" + userinfo + "@cache.example:8080/c?layout=flat",
      "https://" + userinfo + "@cache.example/c?layout=bazel",
      "HTTPS://" + userinfo + "@[::1]:8443/c",
  };
}

TEST(ShownUrl, EveryKindParsesThePasswordWholeAndNeverShowsIt) {
  for (const std::string& password : kPasswords) {
    const std::string decoded = percent_decode(password).value();
    for (const std::string& userinfo : {"ci:" + password, ":" + password}) {
      for (const std::string& text : urls_with(userinfo)) {
        SCOPED_TRACE(text);
        std::string problem;
        const auto url = parse_tier_url(text, &problem);
        ASSERT_TRUE(url) << problem;
        EXPECT_EQ(url->password, decoded);
        EXPECT_EQ(url->user, userinfo.starts_with("ci:") ? "ci" : "");
        EXPECT_TRUE(url->host == "cache.example" || url->host == "node1.example" || url->host == "cache-*.lan" ||
                    url->host == "::1" || url->scheme == "redis+unix")
            << url->host;
        expect_hidden(url->display(), password, "display()");
        EXPECT_NE(url->display().find(":***@"), std::string::npos) << url->display();
        expect_hidden(shown_url(text), password, "shown_url");
        EXPECT_NE(shown_url(text).find(":***@"), std::string::npos) << shown_url(text);
        // What the tier is built from (or why not) names it without the password either.
        std::string built_problem;
        const TierOptions options = tier_options(*url, &built_problem);
        const auto tier = make_tier(*url, options, &built_problem);
        expect_hidden(built_problem, password, "make_tier's problem");
        if (tier) expect_hidden(tier->display_name(), password, "display_name()");
        // A URL that does not parse (a bad port) is named without it.
        const std::string bad = text.substr(0, text.rfind('@')) + "@host:99999";
        EXPECT_FALSE(parse_tier_url(bad, &problem)) << bad;
        expect_hidden(problem, password, "the parse problem");
      }
    }
  }
}

TEST(ShownUrl, MasksThePasswordKeepsTheRest) {
  EXPECT_EQ(shown_url("redis://alice:ab/c?d#e@host:6379/0?timeout=5"), "redis://alice:***@host:6379/0?timeout=5");
  EXPECT_EQ(shown_url("redis://ab/cd@host"), "redis://***@host");
  EXPECT_EQ(shown_url("http://ci:p%2Fw@cache/c?layout=flat"), "http://ci:***@cache/c?layout=flat");
  EXPECT_EQ(shown_url("https://cache/c?layout=flat&bearer-token=tok9&timeout=5"),
            "https://cache/c?layout=flat&bearer-token=***&timeout=5");
  EXPECT_EQ(shown_url("https://cache/c?bearer%2Dtoken=tok9"), "https://cache/c?bearer%2Dtoken=***");
  EXPECT_EQ(shown_url("https://cache/c?bearer-token=to@k9"), "https://cache/c?bearer-token=***");
  EXPECT_EQ(shown_url("file:///mnt/team@site/cache"), "file:///mnt/team@site/cache");
  EXPECT_EQ(shown_url("FILE://u:pw9x@/x"), "FILE://u:***@/x");
  EXPECT_EQ(shown_url("ftp://u:pw/9x@host"), "ftp://u:***@host");
  EXPECT_EQ(shown_url("pw/9x@host"), "***@host");
  EXPECT_EQ(shown_url("redis://host"), "redis://host");
  EXPECT_EQ(shown_urls("  redis://:a/b@h1 \thttp://u:c#d@h2/x\n"), "  redis://:***@h1 \thttp://u:***@h2/x\n");
  EXPECT_EQ(shown_urls(""), "");
}

TEST(ShownUrl, DisplayIsTheParsedUrlThroughShownUrl) {
  auto url = parse_tier_url("redis://al%3Aice:pw@[::1]:6380/3?prefix=team", nullptr);
  ASSERT_TRUE(url);
  EXPECT_EQ(url->user, "al:ice");
  EXPECT_EQ(url->display(), "redis://al%3Aice:***@[::1]:6380?db=3&prefix=team");
  auto back = parse_tier_url(url->display(), nullptr);  // the display parses back, to the same parts
  ASSERT_TRUE(back);
  EXPECT_EQ(back->user, "al:ice");
  EXPECT_EQ(back->host, "::1");
  url = parse_tier_url("redis+unix:///run/a%40b.sock?db=1", nullptr);
  ASSERT_TRUE(url);
  EXPECT_EQ(url->path, "/run/a@b.sock");
  EXPECT_EQ(url->display(), "redis+unix:///run/a%40b.sock?db=1");
  url = parse_tier_url("rediss://:pw@h?tls-ca-file=/etc/me%40site/ca.pem", nullptr);
  ASSERT_TRUE(url);
  EXPECT_EQ(url->query.at("tls-ca-file"), "/etc/me@site/ca.pem");
  EXPECT_EQ(url->display(), "rediss://:***@h?tls-ca-file=/etc/me%40site/ca.pem");
}

// RFC 3986 allows no '/', '?', '#' or '@' in user information; here the last '@' ends it, unless
// what precedes one of those characters could be a host: then the URL is refused, saying how to
// write it, without showing the password.
TEST(ShownUrl, AnAmbiguousUrlIsRefusedWithoutShowingIt) {
  for (const std::string text :
       {"http://h/team@site", "http://cache:8080/xq7w@site/c", "redis://Zm9v/YmFy@host", "https://u:pq3z@h/x@y",
        "rediss://:pq3z@h?tls-ca-file=/a@b/ca.pem", "redis://user:kv2j@y/z@cache.example"}) {
    std::string problem;
    EXPECT_FALSE(parse_tier_url(text, &problem)) << text;
    EXPECT_NE(problem.find("%40"), std::string::npos) << problem;
    for (const char* piece : {"team", "xq7w", "Zm9v", "YmFy", "pq3z", "kv2j"}) {
      EXPECT_EQ(problem.find(piece), std::string::npos) << problem;
    }
  }
  EXPECT_TRUE(ambiguous_user_information("h/team"));
  EXPECT_TRUE(ambiguous_user_information("[::1]:80/x"));
  EXPECT_FALSE(ambiguous_user_information(":Zm9v/YmFy"));
  EXPECT_FALSE(ambiguous_user_information("ci:pa/ss"));
  EXPECT_FALSE(ambiguous_user_information("ci:/ss"));
  EXPECT_FALSE(ambiguous_user_information("plain"));
  // Written as the message says, they parse.
  auto path = parse_tier_url("http://h/team%40site", nullptr);
  ASSERT_TRUE(path);
  EXPECT_EQ(path->host, "h");
  EXPECT_EQ(path->path, "/team%40site");
  auto encoded = parse_tier_url("redis://Zm9v%2FYmFy@host", nullptr);
  ASSERT_TRUE(encoded);
  EXPECT_EQ(encoded->password, "Zm9v/YmFy");
}

// Random passwords of letters, digits and every special character: whether the URL parses (the
// password whole) or is refused, no output holds the password or a piece of it.
TEST(ShownUrl, RandomPasswordsNeverShow) {
  std::mt19937 random(20261202);
  constexpr std::string_view kAlphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/?#@%:+=!$&'()*,;~-._";
  int parsed = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string password;
    const std::size_t size = 8 + random() % 24;
    for (std::size_t i = 0; i < size; ++i) password += kAlphabet[random() % kAlphabet.size()];
    const std::string userinfo = trial % 2 ? "ci:" + password : ":" + password;
    for (const std::string& text : urls_with(userinfo)) {
      SCOPED_TRACE(text);
      std::vector<std::string> secrets = {password};
      if (const auto decoded = percent_decode(password)) secrets.push_back(*decoded);
      std::string piece;
      for (char c : password + "/") {  // runs of 6 letters or digits: never in the rest of the URL
        if (std::isalnum(static_cast<unsigned char>(c))) {
          piece.push_back(c);
          continue;
        }
        if (piece.size() >= 6) secrets.push_back(piece);
        piece.clear();
      }
      std::vector<std::string> outputs = {shown_url(text), shown_urls(text + " " + text)};
      std::string problem;
      if (const auto url = parse_tier_url(text, &problem)) {
        ++parsed;
        EXPECT_EQ(url->password, percent_decode(password).value_or("?"));
        outputs.push_back(url->display());
        std::string built;
        const TierOptions options = tier_options(*url, &built);
        if (const auto tier = make_tier(*url, options, &built)) outputs.push_back(tier->display_name());
        outputs.push_back(built);
      } else {
        outputs.push_back(problem);
      }
      for (const std::string& output : outputs) {
        for (const std::string& secret : secrets) {
          EXPECT_EQ(output.find(secret), std::string::npos) << "'" << secret << "' shows in " << output;
        }
      }
    }
  }
  EXPECT_GT(parsed, 3000) << "most of these passwords are accepted as written";
}

TEST(ShownUrl, PercentEncoding) {
  EXPECT_EQ(percent_encode("a/b@c d~", "/"), "a/b%40c%20d~");
  EXPECT_EQ(percent_decode("a%2Fb%40"), "a/b@");
  EXPECT_FALSE(percent_decode("a%2"));
  EXPECT_FALSE(percent_decode("a%zz"));
  EXPECT_FALSE(percent_decode("a%00"));
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
