// The Redis tier against real redis-server processes (tests/redis_server.h) and, for what a real
// server never sends, a fake server whose bytes the test controls.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "store/remote/claim_renewer.h"
#include "store/remote/redis/redis_config.h"
#include "store/remote/redis/shard_choice.h"
#include "store/remote/tier.h"
#include "tests/allocation_tracking.h"
#include "tests/redis_server.h"

// A slow DNS for the tests of this binary: a name ending in ".slow-dns.test" answers as 127.0.0.1
// after 2 s (getaddrinfo is interposed here; every other lookup is libc's).
extern "C" int getaddrinfo(const char* node, const char* service, const addrinfo* hints, addrinfo** res) {
  using Getaddrinfo = int (*)(const char*, const char*, const addrinfo*, addrinfo**);
  static const auto real = reinterpret_cast<Getaddrinfo>(dlsym(RTLD_NEXT, "getaddrinfo"));
  const std::string_view name = node != nullptr ? node : "";
  if (name.ends_with(".slow-dns.test") && (hints == nullptr || (hints->ai_flags & AI_NUMERICHOST) == 0)) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    node = "127.0.0.1";
  }
  return real(node, service, hints, res);
}

namespace nvrtc_cache::store::remote {
namespace {

using namespace std::chrono_literals;
using testing::RedisServer;
using testing::RedisServerOptions;
using Reply = redis::Reply;

Deadline in(std::chrono::milliseconds ms) { return Clock::now() + ms; }
constexpr auto kGenerous = 5000ms;

TierUrl tcp_url(std::uint16_t port, const std::string& password, unsigned db = 0) {
  TierUrl url;
  url.scheme = "redis";
  url.password = password;
  url.host = "127.0.0.1";
  url.port = port;
  url.path = "/" + std::to_string(db);
  return url;
}

TierUrl tcp_url(const RedisServer& server, unsigned db = 0) { return tcp_url(server.port(), server.password(), db); }

TierUrl unix_url(const RedisServer& server, unsigned db = 0) {
  TierUrl url;
  url.scheme = "redis+unix";
  url.password = server.password();
  url.path = server.socket_path();
  url.query["db"] = std::to_string(db);
  return url;
}

std::unique_ptr<Tier> make(const TierUrl& url, const TierOptions& options = {}) {
  std::string problem;
  auto tier = make_redis_tier(url, options, &problem);
  EXPECT_NE(tier, nullptr) << problem;
  return tier;
}

std::string hex(std::string_view bytes) {
  std::string out;
  char digits[3];
  for (unsigned char c : bytes) {
    std::snprintf(digits, sizeof digits, "%02x", c);
    out += digits;
  }
  return out;
}

std::string random_bytes(std::size_t size, unsigned seed) {
  std::mt19937 engine(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(engine());
  return out;
}

long long integer_of(const Reply& reply) {
  EXPECT_EQ(reply.kind, Reply::Kind::kInteger) << reply.text;
  return reply.integer;
}

long long elapsed_ms(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

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
        const std::string value = random_bytes(100 + static_cast<std::size_t>(i) * 37, static_cast<unsigned>(t * 1000 + i));
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
// Refusals and failures

TEST(RedisTier, WrongPasswordIsRefusedWithoutShowingIt) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  const std::string wrong = "not-the-password-91c2";
  auto tier = make(tcp_url(server.port(), wrong));
  const std::string name = "redis://127.0.0.1:" + std::to_string(server.port());
  for (const TierResult& outcome : {tier->get("key", in(kGenerous)), tier->put("key", "v", in(kGenerous)),
                                    tier->check(in(kGenerous))}) {
    EXPECT_EQ(outcome.code, TierCode::kRefused);
    EXPECT_NE(outcome.detail.find("wrong password for " + name), std::string::npos) << outcome.detail;
    EXPECT_EQ(outcome.detail.find(wrong), std::string::npos) << outcome.detail;
    EXPECT_EQ(outcome.detail.find(server.password()), std::string::npos) << outcome.detail;
  }
  EXPECT_EQ(tier->display_name().find(wrong), std::string::npos) << tier->display_name();
  EXPECT_NE(tier->display_name().find("***"), std::string::npos) << tier->display_name();

  auto no_password = make(tcp_url(server.port(), ""));  // the server answers -NOAUTH
  const TierResult noauth = no_password->get("key", in(kGenerous));
  EXPECT_EQ(noauth.code, TierCode::kRefused);
  EXPECT_NE(noauth.detail.find("wrong password for " + name), std::string::npos) << noauth.detail;

  TierUrl with_user = tcp_url(server);
  with_user.user = "nobody";  // an ACL user that does not exist: -WRONGPASS
  const TierResult wrongpass = make(with_user)->get("key", in(kGenerous));
  EXPECT_EQ(wrongpass.code, TierCode::kRefused);
  EXPECT_EQ(wrongpass.detail.find(server.password()), std::string::npos) << wrongpass.detail;
}

// The deployment recipe's readers: an ACL user that may only read. Reads work; a write or a claim
// is a refusal (the server is up), and the check says the tier is reachable but not writable.
TEST(RedisTier, AnAclUserThatMayOnlyReadIsRefusedWritesAndServedReads) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  ASSERT_EQ(server.command({"ACL", "SETUSER", "reader", "on", ">reader-pw-5d1e", "~nvrtc-cache:*", "+get", "+ping",
                            "+select"}).kind,
            Reply::Kind::kStatus);
  ASSERT_EQ(make(tcp_url(server))->put("key", "shared", in(kGenerous)).code, TierCode::kOk);
  TierUrl reader = tcp_url(server.port(), "reader-pw-5d1e");
  reader.user = "reader";
  auto tier = make(reader);
  EXPECT_EQ(tier->get("key", in(kGenerous)).value, "shared");
  const TierResult put = tier->put("key", "planted", in(kGenerous));
  EXPECT_EQ(put.code, TierCode::kRefused) << put.detail;
  EXPECT_NE(put.detail.find("not permitted"), std::string::npos) << put.detail;
  EXPECT_EQ(put.detail.find("reader-pw-5d1e"), std::string::npos) << put.detail;
  TierResult failure;
  EXPECT_EQ(tier->try_claim("claim", "token", 1000ms, in(kGenerous), &failure), ClaimCode::kFailed);
  EXPECT_EQ(failure.code, TierCode::kRefused) << failure.detail;
  EXPECT_EQ(tier->check(in(kGenerous)).code, TierCode::kRefused);
  EXPECT_EQ(make(tcp_url(server))->get("key", in(kGenerous)).value, "shared");
}

// A host name is looked up within the operation's deadline: a slow DNS costs an operation at most
// its connect-timeout, the lookup goes on meanwhile, and a later operation finds its answer.
TEST(RedisTier, ASlowHostLookupCostsAnOperationAtMostItsTimeoutAndAnswersALaterOne) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  ASSERT_EQ(make(tcp_url(server))->put("key", "shared", in(kGenerous)).code, TierCode::kOk);
  TierUrl slow = tcp_url(server);
  slow.host = "cache.slow-dns.test";
  TierOptions options;
  options.connect_timeout = 200ms;
  options.timeout = 300ms;
  const auto built = Clock::now();
  auto tier = make(slow, options);
  EXPECT_LT(elapsed_ms(built), 100) << "building the tier waited for the lookup";
  auto start = Clock::now();
  const TierResult first = tier->get("key", in(options.timeout));
  EXPECT_EQ(first.code, TierCode::kTimeout) << first.detail;
  EXPECT_NE(first.detail.find("looking up cache.slow-dns.test"), std::string::npos) << first.detail;
  EXPECT_EQ(first.detail.find(server.password()), std::string::npos) << first.detail;
  EXPECT_GE(elapsed_ms(start), 150);
  EXPECT_LE(elapsed_ms(start), 200 + 300);
  start = Clock::now();
  EXPECT_EQ(tier->put("other", "v", in(options.timeout)).code, TierCode::kTimeout);  // the same lookup, still going
  EXPECT_LE(elapsed_ms(start), 200 + 300);
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(tier->get("key", in(kGenerous)).value, "shared") << "the lookup's answer was not kept";
}

// A name that does not resolve is an error (or a timeout, where DNS does not answer), within the
// operation's deadline; the next operation looks it up again.
TEST(RedisTier, AnUnresolvableHostIsAFailureWithinTheDeadline) {
  TierUrl url = tcp_url(6379, "secret-3b7c");
  url.host = "no-such-host.nvrtc-cache.invalid";
  TierOptions options;
  options.connect_timeout = 200ms;
  options.timeout = 300ms;
  auto tier = make(url, options);
  for (int i = 0; i < 2; ++i) {
    const auto start = Clock::now();
    const TierResult r = tier->get("key", in(options.timeout));
    EXPECT_TRUE(r.code == TierCode::kError || r.code == TierCode::kTimeout) << r.detail;
    EXPECT_NE(r.detail.find("no-such-host.nvrtc-cache.invalid"), std::string::npos) << r.detail;
    EXPECT_EQ(r.detail.find("secret-3b7c"), std::string::npos) << r.detail;
    EXPECT_LE(elapsed_ms(start), 200 + 300);
  }
}

TEST(RedisTier, ReadOnlyRefusesWritesWithoutTouchingTheServer) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  ASSERT_EQ(make(tcp_url(server))->put("key", "shared", in(kGenerous)).code, TierCode::kOk);
  TierOptions read_only;
  read_only.read_only = true;
  auto tier = make(tcp_url(server), read_only);
  EXPECT_FALSE(tier->writable());
  EXPECT_EQ(tier->get("key", in(kGenerous)).value, "shared");
  EXPECT_EQ(tier->put("key", "mine", in(kGenerous)).code, TierCode::kRefused);
  EXPECT_EQ(tier->try_claim("claim", "token", 1000ms, in(kGenerous), nullptr), ClaimCode::kUnsupported);
  EXPECT_EQ(make(tcp_url(server))->get("key", in(kGenerous)).value, "shared");

  // Nothing listens on this port: a write that touched the network would be kError, not kRefused.
  const std::uint16_t dead_port = server.port();
  server.stop();
  EXPECT_EQ(make(tcp_url(dead_port, "x"), read_only)->put("key", "v", in(kGenerous)).code, TierCode::kRefused);
}

TEST(RedisTier, KilledServerIsAnErrorQuickly) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  TierOptions options;
  options.timeout = 2000ms;
  auto tier = make(tcp_url(server), options);
  ASSERT_EQ(tier->put("key", "v", in(options.timeout)).code, TierCode::kOk);  // a pooled connection now
  server.kill9();
  for (int i = 0; i < 2; ++i) {  // through the pooled connection, then a refused connect
    const auto start = Clock::now();
    const TierResult got = tier->get("key", in(options.timeout));
    EXPECT_EQ(got.code, TierCode::kError) << got.detail;
    EXPECT_LT(elapsed_ms(start), 1000) << got.detail;
  }
}

TEST(RedisTier, FrozenServerTimesOutAtTheDeadline) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  TierOptions options;
  options.timeout = 300ms;
  auto pooled = make(tcp_url(server), options);
  ASSERT_EQ(pooled->put("key", "v", in(kGenerous)).code, TierCode::kOk);
  server.freeze();
  auto fresh = make(tcp_url(server), options);  // connects (the kernel accepts), AUTH never answered
  const std::string big(4 << 20, 'z');          // more than the socket buffers take: send() must wait
  std::vector<std::pair<std::string, std::function<TierResult()>>> cases{
      {"get on a pooled connection", [&] { return pooled->get("key", in(options.timeout)); }},
      {"put of 4 MB on a pooled connection", [&] { return pooled->put("key", big, in(options.timeout)); }},
      {"get on a new connection", [&] { return fresh->get("key", in(options.timeout)); }},
      {"check", [&] { return fresh->check(in(options.timeout)); }},
  };
  for (const auto& [name, run] : cases) {
    const auto start = Clock::now();
    const TierResult got = run();
    const long long took = elapsed_ms(start);
    ::testing::Test::RecordProperty(name, std::to_string(took) + " ms");  // in --gtest_output=xml
    EXPECT_EQ(got.code, TierCode::kTimeout) << name << ": " << got.detail;
    EXPECT_GE(took, 250) << name;
    EXPECT_LE(took, 300 + 500) << name;
  }
  const auto start = Clock::now();
  TierResult failure;
  EXPECT_EQ(fresh->try_claim("c", "t", 1000ms, in(options.timeout), &failure), ClaimCode::kFailed);
  EXPECT_EQ(failure.code, TierCode::kTimeout) << failure.detail;
  fresh->release_claim("c", "t", in(options.timeout));
  EXPECT_LE(elapsed_ms(start), 2 * 300 + 500);
  server.thaw();
  EXPECT_EQ(pooled->get("key", in(kGenerous)).value, "v");  // recovers once the server answers
}

TEST(RedisTier, DeadlineInThePastIsATimeoutAtOnce) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  auto tier = make(tcp_url(server));
  EXPECT_EQ(tier->get("key", Clock::now() - 1ms).code, TierCode::kTimeout);
  EXPECT_EQ(tier->put("key", "v", Clock::now() - 1ms).code, TierCode::kTimeout);
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), 0);
}

TEST(RedisTier, NoevictionServerServesReadsAndRefusesWrites) {
  RedisServerOptions options;
  options.maxmemory = "4mb";
  options.maxmemory_policy = "noeviction";
  RedisServer server(options);
  ASSERT_TRUE(server.ok());
  auto tier = make(tcp_url(server));
  ASSERT_EQ(tier->put("early", "fits", in(kGenerous)).code, TierCode::kOk);
  const std::string chunk(512 << 10, 'm');
  TierResult refused;
  for (int i = 0; i < 64 && refused.code != TierCode::kRefused; ++i) {
    refused = tier->put("fill-" + std::to_string(i), chunk, in(kGenerous));
    ASSERT_TRUE(refused.code == TierCode::kOk || refused.code == TierCode::kRefused) << refused.detail;
  }
  ASSERT_EQ(refused.code, TierCode::kRefused) << "the server never filled up";
  EXPECT_NE(refused.detail.find("server is full (maxmemory, noeviction)"), std::string::npos) << refused.detail;
  EXPECT_EQ(tier->get("early", in(kGenerous)).value, "fits");
  EXPECT_EQ(tier->get("fill-0", in(kGenerous)).code, TierCode::kOk);
  // A claim is a write too: refused once the server is over its limit, and said to be (not a
  // timeout or a broken connection).
  ASSERT_EQ(server.command({"CONFIG", "SET", "maxmemory", "1"}).kind, Reply::Kind::kStatus);
  TierResult failure;
  EXPECT_EQ(tier->try_claim("program", "token", 1000ms, in(kGenerous), &failure), ClaimCode::kFailed);
  EXPECT_EQ(failure.code, TierCode::kRefused) << failure.detail;
  EXPECT_NE(failure.detail.find("server is full"), std::string::npos) << failure.detail;
}

TEST(RedisTier, StalePooledConnectionIsReplaced) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  auto tier = make(tcp_url(server));
  ASSERT_EQ(tier->put("key", "v", in(kGenerous)).code, TierCode::kOk);
  // The server drops every normal client but the one asking (as after `timeout` or a restart).
  EXPECT_GE(integer_of(server.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"})), 1);
  const TierResult got = tier->get("key", in(kGenerous));
  EXPECT_EQ(got.code, TierCode::kOk) << got.detail;
}

TEST(RedisTier, CheckReportsRoundTrips) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  const TierResult checked = make(tcp_url(server))->check(in(kGenerous));
  EXPECT_EQ(checked.code, TierCode::kOk) << checked.detail;
  EXPECT_NE(checked.detail.find("PONG in"), std::string::npos) << checked.detail;
  EXPECT_NE(checked.detail.find("probe key in"), std::string::npos) << checked.detail;
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), 0);  // the probe key is gone
  TierOptions read_only;
  read_only.read_only = true;
  const TierResult reading = make(tcp_url(server), read_only)->check(in(kGenerous));
  EXPECT_EQ(reading.code, TierCode::kOk) << reading.detail;
  EXPECT_NE(reading.detail.find("read-only"), std::string::npos) << reading.detail;
  const std::uint16_t port = server.port();
  server.stop();
  const TierResult down = make(tcp_url(port, "x"))->check(in(kGenerous));
  EXPECT_EQ(down.code, TierCode::kError);
  EXPECT_NE(down.detail.find("redis://127.0.0.1:" + std::to_string(port)), std::string::npos) << down.detail;
}

// ---------------------------------------------------------------------------------------------
// A fake server: accepts connections on loopback and answers each with bytes the test chose.

class FakeServer {
 public:
  enum class Then { kStayOpen, kClose, kCloseAtOnce };

  FakeServer(std::string reply, Then then) : reply_(std::move(reply)), then_(then) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(listen(listener_, 16), 0);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    for (int fd : open_) close(fd);
    close(listener_);
  }
  std::uint16_t port() const { return port_; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      if (then_ == Then::kCloseAtOnce) {
        close(fd);
        continue;
      }
      pollfd request{fd, POLLIN, 0};
      char buffer[4096];
      if (poll(&request, 1, 2000) > 0) (void)recv(fd, buffer, sizeof buffer, 0);
      (void)send(fd, reply_.data(), reply_.size(), MSG_NOSIGNAL);
      if (then_ == Then::kClose) close(fd);
      else open_.push_back(fd);
    }
  }

  std::string reply_;
  Then then_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> open_;
  std::thread thread_;
};

TEST(RedisTier, GarbageRepliesAreErrorsWithoutLargeAllocations) {
  struct Case {
    const char* name;
    std::string reply;
    FakeServer::Then then;
  };
  const std::vector<Case> cases{
      {"not RESP", "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", FakeServer::Then::kStayOpen},
      {"truncated bulk", "$100\r\nonly a few bytes", FakeServer::Then::kClose},
      {"enormous bulk length", "$9223372036854775807\r\n", FakeServer::Then::kStayOpen},
      {"bulk over the cap", "$5000000\r\n" + std::string(1000, 'b'), FakeServer::Then::kStayOpen},
      {"negative bulk length", "$-7\r\n", FakeServer::Then::kStayOpen},
      {"endless line", "+" + std::string(1 << 20, 'l'), FakeServer::Then::kStayOpen},
      {"CR without LF", "+OK\rX\r\n", FakeServer::Then::kStayOpen},
      {"bulk without its CRLF", "$3\r\nabcXY", FakeServer::Then::kStayOpen},
      {"array", "*1\r\n$1\r\na\r\n", FakeServer::Then::kStayOpen},
      {"EOF at once", "", FakeServer::Then::kClose},
  };
  TierOptions options;
  options.max_entry_size = 1000;
  options.timeout = 2000ms;
  for (const Case& c : cases) {
    FakeServer fake(c.reply, c.then);
    auto tier = make(tcp_url(fake.port(), ""), options);
    TierResult got;
    const auto start = Clock::now();
    const std::size_t largest = testing::largest_allocation_during([&] { got = tier->get("key", in(options.timeout)); });
    EXPECT_EQ(got.code, TierCode::kError) << c.name << ": " << got.detail;
    EXPECT_LT(largest, 256u << 10) << c.name;
    EXPECT_LT(elapsed_ms(start), 1500) << c.name << " waited for the deadline instead of failing";
  }
}

// Mutated and spliced replies through a socketpair: every reply read is well-formed and within the
// cap, nothing allocates beyond the input buffer and the cap, and reading always ends (EOF).
TEST(RespConnection, ArbitraryBytesNeverCrashOrOverAllocate) {
  const std::vector<std::string> seeds{"+OK\r\n", "-ERR wrong\r\n", ":123\r\n", ":-9\r\n", "$5\r\nhello\r\n",
                                       "$0\r\n\r\n", "$-1\r\n", "*1\r\n$1\r\nx\r\n", "$4096\r\n"};
  constexpr std::uint64_t kCap = 4096;
  std::mt19937 engine(20261122);
  int replies = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string input;
    for (int parts = 1 + static_cast<int>(engine() % 4); parts > 0; --parts) input += seeds[engine() % seeds.size()];
    for (int flips = static_cast<int>(engine() % 4); flips > 0; --flips) {
      input[engine() % input.size()] = static_cast<char>(engine() % 4 == 0 ? engine() : "\r\n$:+-*0123456789"[engine() % 17]);
    }
    if (engine() % 3 == 0) input.resize(engine() % (input.size() + 1));
    int ends[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends), 0);
    ASSERT_EQ(write(ends[0], input.data(), input.size()), static_cast<ssize_t>(input.size()));
    close(ends[0]);
    auto connection = redis::RespConnection::adopt(ends[1]);
    const std::size_t largest = testing::largest_allocation_during([&] {
      for (int i = 0; i < 64; ++i) {
        Reply reply;
        if (!connection->read_reply(&reply, kCap, in(1000ms)).ok()) return;
        ++replies;
        EXPECT_LE(reply.text.size(), kCap);
      }
      ADD_FAILURE() << "more replies than the input can hold";
    });
    EXPECT_LE(largest, kCap + 64) << "round " << round;
  }
  EXPECT_GT(replies, 1000);  // the mutations leave many inputs readable: the reader is exercised
}

TEST(RedisTier, ClosedConnectionDoesNotRaiseSigpipe) {
  FakeServer fake("", FakeServer::Then::kCloseAtOnce);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGPIPE, SIG_DFL);
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigprocmask(SIG_UNBLOCK, &pipe_only, nullptr);
    std::string problem;
    auto tier = make_redis_tier(tcp_url(fake.port(), ""), TierOptions{}, &problem);
    if (tier == nullptr) _exit(3);
    const std::string big(8 << 20, 'p');  // far more than the socket buffer: send() meets the reset
    int errors = 0;
    for (int i = 0; i < 5; ++i) {
      if (tier->put("key", big, in(2000ms)).code == TierCode::kError) ++errors;
    }
    _exit(errors == 5 ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// ---------------------------------------------------------------------------------------------
// Shards

TEST(RedisShards, RendezvousMovesOnlyTheNewShardsShare) {
  const std::vector<redis::ShardWeight> three{{"a"}, {"b"}, {"c"}};
  const std::vector<redis::ShardWeight> four{{"a"}, {"b"}, {"c"}, {"d"}};
  constexpr int kKeys = 20000;
  std::array<int, 3> counts{};
  int moved = 0;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "key-" + std::to_string(i);
    const std::size_t before = redis::choose_shard(key, three);
    const std::size_t after = redis::choose_shard(key, four);
    ++counts[before];
    if (before != after) {
      ++moved;
      EXPECT_EQ(after, 3u) << key << " moved between old shards";
    }
  }
  for (int count : counts) EXPECT_NEAR(count, kKeys / 3, kKeys / 20);
  EXPECT_NEAR(moved, kKeys / 4, kKeys / 25);

  const std::vector<redis::ShardWeight> weighted{{"a", 1.0}, {"b", 3.0}};
  int to_b = 0;
  for (int i = 0; i < kKeys; ++i) to_b += redis::choose_shard("key-" + std::to_string(i), weighted) == 1;
  EXPECT_NEAR(to_b, kKeys * 3 / 4, kKeys / 25);
}

TEST(RedisShards, KeysSpreadOverServersAndAFourthTakesAQuarter) {
  std::vector<std::unique_ptr<RedisServer>> servers;
  for (int i = 0; i < 4; ++i) {
    servers.push_back(std::make_unique<RedisServer>());
    ASSERT_TRUE(servers.back()->ok());
  }
  auto sharded = [&](int count) {
    TierUrl url;
    url.scheme = "redis";
    url.password = servers[0]->password();
    url.host = "*";
    std::string list;
    for (int i = 0; i < count; ++i) list += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(servers[i]->port());
    url.query["shards"] = list;
    return make(url);
  };
  auto three = sharded(3);
  ASSERT_NE(three, nullptr);
  constexpr int kKeys = 600;
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ(three->put("key-" + std::to_string(i), "value-" + std::to_string(i), in(kGenerous)).code, TierCode::kOk);
  }
  long long total = 0;
  for (int i = 0; i < 3; ++i) {
    const long long on_server = integer_of(servers[i]->command({"DBSIZE"}));
    EXPECT_GT(on_server, kKeys / 3 - kKeys / 8) << "server " << i;
    EXPECT_LT(on_server, kKeys / 3 + kKeys / 8) << "server " << i;
    total += on_server;
  }
  EXPECT_EQ(total, kKeys);

  auto four = sharded(4);
  int misses = 0;
  for (int i = 0; i < kKeys; ++i) {
    const TierResult got = four->get("key-" + std::to_string(i), in(kGenerous));
    if (got.code == TierCode::kMiss) ++misses;
    else EXPECT_EQ(got.value, "value-" + std::to_string(i));
  }
  EXPECT_GT(misses, kKeys / 4 - kKeys / 10);  // the keys the new server wins, and only those
  EXPECT_LT(misses, kKeys / 4 + kKeys / 10);
}

// ---------------------------------------------------------------------------------------------
// Claims

TEST(RedisClaims, OneWinsOnlyTheHolderReleasesAndLeasesExpire) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  auto first = make(tcp_url(server));
  auto second = make(tcp_url(server));
  EXPECT_EQ(first->try_claim("program", "token-1", 10s, in(kGenerous), nullptr), ClaimCode::kClaimed);
  EXPECT_EQ(second->try_claim("program", "token-2", 10s, in(kGenerous), nullptr), ClaimCode::kHeldByOther);
  second->release_claim("program", "token-2", in(kGenerous));  // not the holder: nothing happens
  EXPECT_EQ(second->try_claim("program", "token-2", 10s, in(kGenerous), nullptr), ClaimCode::kHeldByOther);
  const long long lease = integer_of(server.command({"PTTL", "nvrtc-cache:v1:claim:" + hex("program")}));
  EXPECT_GT(lease, 5000);
  first->release_claim("program", "token-1", in(kGenerous));
  EXPECT_EQ(second->try_claim("program", "token-2", 10s, in(kGenerous), nullptr), ClaimCode::kClaimed);
  EXPECT_EQ(first->get("program", in(kGenerous)).code, TierCode::kMiss);  // claims are not values

  EXPECT_EQ(first->try_claim("short", "token-1", 200ms, in(kGenerous), nullptr), ClaimCode::kClaimed);
  EXPECT_EQ(second->try_claim("short", "token-2", 200ms, in(kGenerous), nullptr), ClaimCode::kHeldByOther);
  ClaimCode after_lease = ClaimCode::kHeldByOther;
  const auto give_up = Clock::now() + 5s;
  while (after_lease == ClaimCode::kHeldByOther && Clock::now() < give_up) {
    std::this_thread::sleep_for(50ms);
    after_lease = second->try_claim("short", "token-2", 10s, in(kGenerous), nullptr);
  }
  EXPECT_EQ(after_lease, ClaimCode::kClaimed);
}

// A holder renews its short lease while it compiles: the claim outlives many leases while renewed,
// only its holder can renew it, and it lapses one lease after the renewals stop (a holder killed or
// stopped). A waiter reads the holder's token and remaining lease in one round trip.
TEST(RedisClaims, RenewedClaimsOutliveTheirLeaseAndLapseOneLeaseAfterTheRenewalsStop) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  std::shared_ptr<Tier> holder = make(tcp_url(server));
  auto waiter = make(tcp_url(server));
  constexpr auto kLease = 300ms;
  ASSERT_EQ(holder->try_claim("program", "token-1", kLease, in(kGenerous), nullptr), ClaimCode::kClaimed);
  const std::optional<ClaimHolder> seen = waiter->claim_holder("program", in(kGenerous));
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->token, "token-1");
  EXPECT_GT(seen->remaining.count(), 0);
  EXPECT_LE(seen->remaining, kLease);
  EXPECT_FALSE(waiter->claim_holder("absent", in(kGenerous)));
  EXPECT_FALSE(waiter->renew_claim("program", "token-2", 60s, in(kGenerous))) << "another's claim was renewed";
  EXPECT_LE(waiter->claim_holder("program", in(kGenerous))->remaining, kLease);

  ClaimRenewer renewer;
  std::atomic<int> renewals{0};
  const std::uint64_t id = renewer.add([&] {
    ++renewals;
    return holder->renew_claim("program", "token-1", kLease, in(kGenerous));
  }, kLease);
  ASSERT_NE(id, 0u);
  const auto renewed_until = Clock::now() + 5 * kLease;
  while (Clock::now() < renewed_until) {
    ASSERT_EQ(waiter->try_claim("program", "token-2", kLease, in(kGenerous), nullptr), ClaimCode::kHeldByOther)
        << "a renewed claim lapsed";
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_GE(renewals.load(), 5);
  renewer.remove(id);
  const auto stopped = Clock::now();
  ClaimCode after = ClaimCode::kHeldByOther;
  while (after == ClaimCode::kHeldByOther && Clock::now() < stopped + 5s) {
    std::this_thread::sleep_for(10ms);
    after = waiter->try_claim("program", "token-2", kLease, in(kGenerous), nullptr);
  }
  EXPECT_EQ(after, ClaimCode::kClaimed);
  EXPECT_LE(Clock::now() - stopped, kLease + 1s) << "the claim outlived its holder's renewals by more than a lease";

  // A renewal that finds the claim another's drops its entry.
  std::atomic<int> lost_renewals{0};
  (void)renewer.add([&] {
    ++lost_renewals;
    return holder->renew_claim("program", "token-1", kLease, in(kGenerous));
  }, 60ms);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(lost_renewals.load(), 1);
  EXPECT_EQ(renewer.held(), 0u);
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
    const bool ok = tier->put("child", "c", in(kGenerous)).code == TierCode::kOk &&
                    tier->get("parent", in(kGenerous)).value == "p";
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

// ---------------------------------------------------------------------------------------------
// URLs

TEST(RedisConfig, ParsesServersDatabaseAndShards) {
  std::string problem;
  TierUrl url;
  url.scheme = "redis";
  url.host = "cache.example";
  auto config = redis::redis_config(url, &problem);
  ASSERT_TRUE(config) << problem;
  ASSERT_EQ(config->servers.size(), 1u);
  EXPECT_EQ(config->servers[0].port, 6379);
  EXPECT_EQ(config->db, 0u);
  EXPECT_EQ(config->servers[0].display, "redis://cache.example:6379");

  url.path = "/5";
  url.port = 7000;
  url.user = "builder";
  url.password = "hunter2";
  config = redis::redis_config(url, &problem);
  ASSERT_TRUE(config) << problem;
  EXPECT_EQ(config->db, 5u);
  EXPECT_EQ(config->servers[0].port, 7000);
  EXPECT_EQ(config->user, "builder");
  EXPECT_EQ(redis::redis_display_name(url), "redis://builder:***@cache.example:7000/5");

  url.query["db"] = "6";
  EXPECT_FALSE(redis::redis_config(url, &problem));  // two different databases
  EXPECT_EQ(problem.find("hunter2"), std::string::npos) << problem;
  url.query.erase("db");

  url.host = "cache-*.example";
  url.query["shards"] = "1,2(2.5),3";
  config = redis::redis_config(url, &problem);
  ASSERT_TRUE(config) << problem;
  ASSERT_EQ(config->servers.size(), 3u);
  EXPECT_EQ(config->servers[1].host, "cache-2.example");
  EXPECT_EQ(config->servers[1].shard_name, "2");
  EXPECT_EQ(config->servers[1].weight, 2.5);
  EXPECT_EQ(config->servers[2].port, 7000);

  url.host = "*";
  url.query["shards"] = "10.0.0.1:6380,[::1]:6381,10.0.0.2";
  config = redis::redis_config(url, &problem);
  ASSERT_TRUE(config) << problem;
  EXPECT_EQ(config->servers[0].host, "10.0.0.1");
  EXPECT_EQ(config->servers[0].port, 6380);
  EXPECT_EQ(config->servers[1].host, "::1");
  EXPECT_EQ(config->servers[1].display, "redis://[::1]:6381");
  EXPECT_EQ(config->servers[2].port, 7000);

  for (const char* bad : {"a,,b", "a(0)", "a(x)", "a,a", ""}) {
    url.query["shards"] = bad;
    EXPECT_FALSE(redis::redis_config(url, &problem)) << bad;
  }
  url.query.erase("shards");
  EXPECT_FALSE(redis::redis_config(url, &problem));  // a `*` without shards
  url.host = "plain";
  url.query["shards"] = "a,b";
  EXPECT_FALSE(redis::redis_config(url, &problem));  // shards without a `*`

  TierUrl socket;
  socket.scheme = "redis+unix";
  socket.path = "/run/redis-*.sock";
  socket.query = {{"db", "2"}, {"shards", "a,b"}};
  config = redis::redis_config(socket, &problem);
  ASSERT_TRUE(config) << problem;
  EXPECT_EQ(config->db, 2u);
  EXPECT_EQ(config->servers[1].socket_path, "/run/redis-b.sock");
  EXPECT_EQ(config->servers[1].display, "redis+unix:///run/redis-b.sock");
  socket.path = "relative.sock";
  socket.query.clear();
  EXPECT_FALSE(redis::redis_config(socket, &problem));
  socket.path = "/" + std::string(200, 's');
  EXPECT_FALSE(redis::redis_config(socket, &problem));
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
