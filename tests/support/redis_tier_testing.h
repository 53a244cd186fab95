// Test support for the Redis tier suites (redis_tests): deadlines, tier URLs for a test's
// redis-server (tests/support/redis_server.h), making a tier, and a few byte helpers. Contract:
// test-only; header-only; a tier that cannot be made is a gtest failure (and null) in the caller.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "store/remote/redis/resp_connection.h"
#include "store/remote/tier.h"
#include "tests/support/redis_server.h"

namespace nvrtc_cache::store::remote::redis_tier_testing {

using namespace std::chrono_literals;

inline Deadline in(std::chrono::milliseconds ms) { return Clock::now() + ms; }
inline constexpr auto kGenerous = 5000ms;

inline TierUrl tcp_url(std::uint16_t port, const std::string& password, unsigned db = 0) {
  TierUrl url;
  url.scheme = "redis";
  url.password = password;
  url.host = "127.0.0.1";
  url.port = port;
  url.path = "/" + std::to_string(db);
  return url;
}

inline TierUrl tcp_url(const nvrtc_cache::testing::RedisServer& server, unsigned db = 0) {
  return tcp_url(server.port(), server.password(), db);
}

inline TierUrl unix_url(const nvrtc_cache::testing::RedisServer& server, unsigned db = 0) {
  TierUrl url;
  url.scheme = "redis+unix";
  url.password = server.password();
  url.path = server.socket_path();
  url.query["db"] = std::to_string(db);
  return url;
}

inline std::unique_ptr<Tier> make(const TierUrl& url, const TierOptions& options = {}) {
  std::string problem;
  auto tier = make_redis_tier(url, options, &problem);
  EXPECT_NE(tier, nullptr) << problem;
  return tier;
}

inline std::string hex(std::string_view bytes) {
  std::string out;
  char digits[3];
  for (unsigned char c : bytes) {
    std::snprintf(digits, sizeof digits, "%02x", c);
    out += digits;
  }
  return out;
}

inline std::string random_bytes(std::size_t size, unsigned seed) {
  std::mt19937 engine(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(engine());
  return out;
}

inline long long integer_of(const redis::Reply& reply) {
  EXPECT_EQ(reply.kind, redis::Reply::Kind::kInteger) << reply.text;
  return reply.integer;
}

inline long long elapsed_ms(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

}  // namespace nvrtc_cache::store::remote::redis_tier_testing
