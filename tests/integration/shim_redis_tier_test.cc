// A shared Redis tier through real processes, the real NVRTC and a real redis-server (tests/
// redis_server.h): "nodes" are separate cache directories sharing one server (NVRTC_CACHE_REMOTE
// with a password). Every result is compared byte for byte with NVRTC's.
#include <algorithm>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/harness.h"
#include "store/remote/breaker.h"
#include "store/remote/sealed_value.h"
#include "store/remote/secret.h"
#include "tests/support/redis_server.h"

namespace nvrtc_cache {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using store::remote::redis::Reply;

long long integer_of(const Reply& reply) {
  EXPECT_EQ(reply.kind, Reply::Kind::kInteger) << reply.text;
  return reply.integer;
}

// The data keys on the server (claims and probes aside). KEYS answers an array, which the test's
// client does not read: a script joins it into one string.
std::vector<std::string> data_keys(const RedisServer& server) {
  const Reply joined =
      server.command({"EVAL", "return table.concat(redis.call('KEYS', ARGV[1]), '\\n')", "0", "nvrtc-cache:v1:*"});
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

std::size_t lines_of(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Waits (at most 10 s) until the server holds `count` data keys: the write-behind of a round landed.
bool wait_for_data_keys(const RedisServer& server, std::size_t count) {
  for (int i = 0; i < 1000 && data_keys(server).size() < count; ++i) std::this_thread::sleep_for(10ms);
  return data_keys(server).size() >= count;
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
  EXPECT_EQ(get(cb, "tier.0.hits"), get(ca, "stores")) << "one result served per compile";
  EXPECT_EQ(get(cb, "tier.0.index_hits"), get(ca, "stores")) << "and one manifest";
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
  RecordProperty("healthy_ms",
                 static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(healthy).count()));
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
  EXPECT_EQ(get(cb, "tier.0.hits") + get(cb, "tier.0.index_hits"), get(ca, "tier.0.writes")) << "reads did not work";
  EXPECT_GT(get(cb, "misses"), 0);
  EXPECT_EQ(get(cb, "tier.0.writes"), 0);
  EXPECT_GT(get(cb, "tier.0.errors") + get(cb, "tier.0.skipped"), 0) << "refused writes were not counted";
  EXPECT_EQ(get(cb, "errors"), 0);
  EXPECT_EQ(integer_of(server.command({"DBSIZE"})), keys);
}

// One process against a full server: every claim and write of its new programs is refused (counted
// as errors), and that never stops it reading what is there: a refusal is an answer from a server
// that is up, not a reason to open the breaker.
TEST_F(SharedRedisTier, RefusedWritesOfAFullServerNeverStopItsReads) {
  const std::vector<int> rounds = {1, 2, 3, 4, 5, 9};
  const ProcessResult direct = PacedProbe::reference(rounds);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  RedisServerOptions options;
  options.maxmemory_policy = "noeviction";
  RedisServer server(options);
  ASSERT_TRUE(server.ok());
  {
    PacedProbe writer({9}, node_env(node("writer"), server.url()));  // round 9's program, while there is room
    writer.round(9);
    EXPECT_EQ(writer.finish().exit_code, 0);
  }
  ASSERT_TRUE(wait_for_data_keys(server, 2));
  ASSERT_EQ(server.command({"CONFIG", "SET", "maxmemory", "1"}).kind, Reply::Kind::kStatus);  // full from now on
  const long long keys = integer_of(server.command({"DBSIZE"}));

  PacedProbe client(rounds, node_env(node("a"), server.url()));
  for (int n : rounds) client.round(n);
  const ProcessResult r = client.finish();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == direct.out) << "a result differs from NVRTC's";
  EXPECT_LE(lines_of(r.err), 1u) << r.err;
  const auto c = counters_of(node("a"));
  EXPECT_EQ(get(c, "misses"), 5);
  EXPECT_EQ(get(c, "hits"), 1) << "round 9 was not read from the full server";
  EXPECT_EQ(get(c, "tier.0.hits"), 1) << "round 9's result";
  EXPECT_EQ(get(c, "tier.0.index_hits"), 1) << "round 9's manifest";
  EXPECT_GE(get(c, "tier.0.errors"), 5) << "the refused claims and writes were not counted";
  EXPECT_EQ(get(c, "tier.0.writes"), 0);
  EXPECT_EQ(get(c, "tier.0.breaker_opened"), 0);
  EXPECT_EQ(get(c, "tier.0.skipped"), 0);
  EXPECT_EQ(get(c, "errors"), 0);
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

// With a secret, values written without it are refused (mac_rejected), and a value larger than the
// reader's max-entry-size is refused before it is read; both are misses, compiled exactly, and the
// reader's signed rewrites then serve a third node.
// The Redis key of the cross-node claim of the program whose manifest is stored under `manifest_key`
// (`nvrtc-cache:v1:` + hex of "M" + its direct key): `nvrtc-cache:v1:claim:` + hex of
// "nvrtc-cache:claim:" + the direct key in hex.
std::string claim_key_of(const std::string& manifest_key) {
  const std::string direct_hex = manifest_key.substr(std::string("nvrtc-cache:v1:4d").size());
  std::string hex;
  for (unsigned char c : "nvrtc-cache:claim:" + direct_hex) {
    static const char* digits = "0123456789abcdef";
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  return "nvrtc-cache:v1:claim:" + hex;
}

// Cross-node claims against one program's claim key: node "a" stores the program through Redis
// (so its keys are known), then each cold compile runs on a fresh node with the shared values gone,
// the test having set the claim as it likes.
class SharedRedisClaims : public SharedRedisTier {
 protected:
  void SetUp() override {
    SharedRedisTier::SetUp();
    ASSERT_TRUE(server_.ok());
    direct_trivial_ = probe({"trivial"}, {});
    const ProcessResult first = probe({"trivial"}, env_of("a"));
    ASSERT_EQ(first.out, direct_trivial_.out) << first.err;
    ASSERT_TRUE(wait_for_data_keys(server_, 2));
    for (const std::string& key : data_keys(server_)) {
      if (server_.command({"GET", key}).text.find("NVMF") != std::string::npos) manifest_key_ = key;
    }
    ASSERT_NE(manifest_key_, "");
    claim_key_ = claim_key_of(manifest_key_);
  }
  EnvVars env_of(const std::string& name) const { return node_env(node(name), server_.url(), secret_file_); }
  // A cold compile on a new node: exact, and how long it took.
  std::pair<ProcessResult, std::chrono::steady_clock::duration> cold_compile_on(const std::string& name) {
    for (const std::string& key : data_keys(server_)) server_.command({"DEL", key});  // nothing shared to serve
    EnvVars env = env_of(name);
    env["NVRTC_CACHE_WAIT_TIMEOUT"] = "120";
    const auto started = std::chrono::steady_clock::now();
    ProcessResult r = probe({"trivial"}, env);
    EXPECT_EQ(r.out, direct_trivial_.out) << r.err;
    return {std::move(r), std::chrono::steady_clock::now() - started};
  }
  void set_claim(const std::string& token, const std::string& lease_ms) {
    ASSERT_EQ(server_.command({"SET", claim_key_, token, "PX", lease_ms}).kind, Reply::Kind::kStatus);
  }

  RedisServer server_;
  std::string secret_file_;  // set before SetUp by a test that signs
  ProcessResult direct_trivial_;
  std::string manifest_key_, claim_key_;
};

class SignedRedisClaims : public SharedRedisClaims {
 protected:
  void SetUp() override {
    secret_file_ = root_.path() + "/secret";
    std::ofstream(secret_file_) << "a shared secret of the fleet\n";
    ASSERT_EQ(::chmod(secret_file_.c_str(), 0600), 0);
    SharedRedisClaims::SetUp();
  }
};

// With a secret, a cross-node claim carries its holder's MAC. A claim anyone could set without it
// (one SET ..., with a lease as short as a holder's) is not waited for: the cold compile runs at
// once, exact, said once; a signed claim is still waited for (until its holder's lease ends).
TEST_F(SignedRedisClaims, AForeignUnsignedClaimDelaysNoCompile) {
  set_claim("anyone", "4000");
  const auto [foreign, foreign_took] = cold_compile_on("b");
  EXPECT_LT(foreign_took, std::chrono::milliseconds(3500)) << "the compile waited for a claim anyone could set";
  EXPECT_NE(foreign.err.find("a claim not signed with the secret is not waited for"), std::string::npos) << foreign.err;
  EXPECT_EQ(get(counters_of(node("b")), "misses"), 1);

  // Control: a claim signed with the secret (a genuine holder on another node, whose lease ends in 3 s)
  // is waited for.
  std::string problem;
  const std::optional<store::remote::Secret> secret = store::remote::read_secret_file(secret_file_, &problem, nullptr);
  ASSERT_TRUE(secret) << problem;
  const std::string tier_key = "nvrtc-cache:claim:" + manifest_key_.substr(std::string("nvrtc-cache:v1:4d").size());
  set_claim(store::remote::seal_value(tier_key, "a genuine holder", &*secret), "3000");
  const auto [waited, waited_took] = cold_compile_on("c");
  EXPECT_GE(waited_took, std::chrono::milliseconds(2500)) << "a signed claim was not waited for";
  EXPECT_EQ(waited.err.find("not signed"), std::string::npos) << waited.err;
}

// A holder takes a 5-second lease and renews it while it compiles. Without a secret, a claim with a
// longer lease (one `SET ... PX 3600000` by any client) is not one a holder set: not waited for,
// said once. A claim whose holder stopped renewing it (killed, stopped, cut off) lapses within its
// lease, so the cold compile waits for it at most that long.
TEST_F(SharedRedisClaims, AForeignOrStaleClaimDelaysACompileByOneLeaseAtMost) {
  set_claim("anyone", "3600000");
  const auto [foreign, foreign_took] = cold_compile_on("b");
  EXPECT_LT(foreign_took, std::chrono::seconds(3)) << "the compile waited for a claim no holder set";
  EXPECT_NE(foreign.err.find("a claim with a longer lease than a holder takes is not waited for"), std::string::npos)
      << foreign.err;
  EXPECT_EQ(get(counters_of(node("b")), "misses"), 1);
  EXPECT_EQ(get(counters_of(node("b")), "waited"), 0);

  // A holder's claim, no longer renewed: waited for until it lapses (4 s), then compiled here.
  set_claim("a holder that died", "4000");
  const auto [stale, stale_took] = cold_compile_on("c");
  EXPECT_GE(stale_took, std::chrono::milliseconds(3500)) << "a holder's claim was not waited for";
  EXPECT_LT(stale_took, std::chrono::seconds(30)) << "a stale claim delayed the compile past its lease";
  EXPECT_EQ(stale.err.find("longer lease"), std::string::npos) << stale.err;
  EXPECT_EQ(get(counters_of(node("c")), "waited"), 1);
  EXPECT_EQ(get(counters_of(node("c")), "misses"), 1);
}

TEST_F(SharedRedisTier, UnsignedAndOversizedValuesUnderRealKeysAreMissesWithASecret) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  const std::string secret = root_.path() + "/secret";
  std::ofstream(secret) << "a shared secret of the fleet\n";
  ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
  run(node("unsigned"), server.url());  // writes without a MAC
  // A manifest (the value a lookup reads first; its payload starts with its magic "NVMF") made
  // oversized; the other values stay unsigned.
  std::string manifest_key;
  for (const std::string& key : data_keys(server)) {
    if (server.command({"GET", key}).text.find("NVMF") != std::string::npos) manifest_key = key;
  }
  ASSERT_NE(manifest_key, "");
  constexpr std::size_t kCap = 1 << 20;
  ASSERT_EQ(server.command({"SET", manifest_key, std::string(kCap + 1, 'O')}).kind, Reply::Kind::kStatus);
  const std::string capped = server.url() + "?max-entry-size=" + std::to_string(kCap);

  const ProcessResult b = probe(kTierScenarios, node_env(node("b"), capped, secret));
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_TRUE(b.out == direct_->out) << "a result differs from NVRTC's";
  EXPECT_EQ(b.err.find("a shared secret"), std::string::npos) << b.err;
  const auto cb = counters_of(node("b"));
  EXPECT_GT(get(cb, "tier.0.mac_rejected"), 0);
  EXPECT_GT(get(cb, "tier.0.errors") + get(cb, "tier.0.corrupt"), 0) << "the oversized value was not refused";
  EXPECT_EQ(get(cb, "tier.0.hits"), 0);
  EXPECT_GT(get(cb, "misses"), 0);
  EXPECT_EQ(get(cb, "errors"), 0);

  const ProcessResult c = probe(kTierScenarios, node_env(node("c"), capped, secret));  // node b's signed values
  EXPECT_TRUE(c.out == direct_->out) << "a result differs from NVRTC's";
  const auto cc = counters_of(node("c"));
  EXPECT_EQ(get(cc, "misses"), 0);
  EXPECT_GT(get(cc, "tier.0.hits"), 0);
  EXPECT_EQ(get(cc, "tier.0.mac_rejected"), 0);
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

TEST_F(SharedRedisTier, ARedisKilledInTheMiddleOfARunLeavesThatProcessExactAndUndelayed) {
  const std::vector<int> rounds = {1, 2, 3, 4};
  const ProcessResult direct = PacedProbe::reference(rounds);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  RedisServer server;
  ASSERT_TRUE(server.ok());
  constexpr auto kTimeout = 1000ms;
  PacedProbe client(rounds, node_env(node("a"), server.url() + "?timeout=1000"));
  const auto healthy = client.round(1);
  ASSERT_TRUE(wait_for_data_keys(server, 2)) << "the first round's result and manifest never reached Redis";
  server.kill9();
  for (int n : {2, 3, 4}) {
    const auto took = client.round(n);
    // A dead server refuses at once: nothing waits for a timeout.
    EXPECT_LT(took, healthy + kTimeout) << "round " << n << " took " << took.count() << " ms";
  }
  const ProcessResult r = client.finish();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == direct.out) << "a result differs from NVRTC's";
  EXPECT_LE(lines_of(r.err), 1u) << "logged more than once: " << r.err;
  EXPECT_EQ(r.err.find(server.password()), std::string::npos) << r.err;
  const auto c = counters_of(node("a"));
  EXPECT_EQ(get(c, "misses"), 4);
  EXPECT_EQ(get(c, "stores"), 4);
  EXPECT_EQ(get(c, "errors"), 0);
  EXPECT_EQ(get(c, "tier.0.writes"), 2) << "only the first round's writes could land";
  EXPECT_GT(get(c, "tier.0.errors") + get(c, "tier.0.skipped"), 0) << "the dead server went unnoticed";
}

// One process across a freeze and a thaw: while the server is frozen each compile waits at most its
// timeout, then the breaker opens and compiles see no delay; once thawed and past the breaker's
// cooldown, a probe closes it again: a program another node wrote is read from Redis, and a new
// program's result is written there.
TEST_F(SharedRedisTier, AFrozenServerOpensTheBreakerAndAThawedOneClosesIt) {
  const std::vector<int> rounds = {1, 2, 3, 4, 5, 6, 8, 7};
  const ProcessResult direct = PacedProbe::reference(rounds);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  RedisServer server;
  ASSERT_TRUE(server.ok());
  const std::string url = server.url() + "?timeout=1000";
  constexpr auto kTimeout = 1000ms;
  {
    PacedProbe writer({8}, node_env(node("writer"), url));  // round 8's program, written by another node
    writer.round(8);
    EXPECT_EQ(writer.finish().exit_code, 0);
  }
  ASSERT_TRUE(wait_for_data_keys(server, 2));

  PacedProbe client(rounds, node_env(node("a"), url));
  const auto healthy = client.round(1);
  ASSERT_TRUE(wait_for_data_keys(server, 4));
  server.freeze();
  std::vector<std::chrono::milliseconds> frozen;
  for (int n : {2, 3, 4, 5, 6}) frozen.push_back(client.round(n));
  std::string frozen_ms;
  for (const auto& took : frozen) frozen_ms += (frozen_ms.empty() ? "" : ",") + std::to_string(took.count());
  RecordProperty("healthy_round_ms", static_cast<int>(healthy.count()));
  RecordProperty("frozen_rounds_ms", frozen_ms);
  const auto longest = *std::max_element(frozen.begin(), frozen.end());
  EXPECT_GE(longest, kTimeout) << "no round waited for the frozen server: the test proved nothing";
  // The first timeout opens the breaker: no compile waits for more than one timeout, and once one
  // has waited, none after it waits at all.
  for (const auto& took : frozen) EXPECT_LT(took, healthy + kTimeout + 500ms) << took.count() << " ms";
  const auto first_wait = std::find_if(frozen.begin(), frozen.end(), [&](auto took) { return took >= kTimeout; });
  for (auto later = first_wait + (first_wait != frozen.end()); later < frozen.end(); ++later) {
    EXPECT_LT(*later, healthy + kTimeout / 2) << "a compile waited after the breaker opened";
  }

  server.thaw();
  std::this_thread::sleep_for(store::remote::Breaker::kFirstCooldown + 1s);  // the probe may go through now
  const std::size_t keys_before = data_keys(server).size();
  const auto probe_round = client.round(8);  // the probe: a read served by Redis closes the breaker
  EXPECT_LT(probe_round, healthy + kTimeout);
  RecordProperty("thawed_rounds_ms",
                 std::to_string(probe_round.count()) + "," +
                     std::to_string(client.round(7).count()));  // round 7: a new program, written to Redis again
  const ProcessResult r = client.finish();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == direct.out) << "a result differs from NVRTC's";
  EXPECT_EQ(r.err.find(server.password()), std::string::npos) << r.err;
  const auto c = counters_of(node("a"));
  EXPECT_EQ(get(c, "errors"), 0);
  EXPECT_GT(get(c, "tier.0.timeouts"), 0) << "the server was not frozen";
  EXPECT_GE(get(c, "tier.0.breaker_opened"), 1);
  EXPECT_GT(get(c, "tier.0.skipped"), 0) << "no operation was skipped while the breaker was open";
  EXPECT_EQ(get(c, "misses"), 7) << "rounds 1-7 compiled";
  EXPECT_EQ(get(c, "hits"), 1) << "round 8 was not served from Redis after the thaw";
  EXPECT_EQ(get(c, "tier.0.hits"), 1) << "round 8's result";
  EXPECT_EQ(get(c, "tier.0.index_hits"), 1) << "round 8's manifest";
  EXPECT_EQ(data_keys(server).size(), keys_before + 2) << "round 7's writes did not reach the thawed server";
}

TEST_F(SharedRedisTier, TwoNodesOfEightProcessesCompileOneProgramOnce) {
  const ProcessResult direct = probe({"cub"}, {});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_NE(direct.out.find("compile rc=0"), std::string::npos);
  RedisServer server;
  ASSERT_TRUE(server.ok());
  const auto results =
      probes_together(16, {"cub"}, [&](int i) { return node_env(node(i % 2 ? "a" : "b"), server.url()); });
  for (const ProcessResult& r : results) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out == direct.out) << "a process's result differs from NVRTC's";
    EXPECT_EQ(r.err, "");
  }
  const auto ca = counters_of(node("a"));
  const auto cb = counters_of(node("b"));
  EXPECT_EQ(get(ca, "misses") + get(cb, "misses"), 1) << "more than one real compile across the nodes";
  EXPECT_EQ(get(ca, "stores") + get(cb, "stores"), 1);
  EXPECT_EQ(get(ca, "hits") + get(cb, "hits"), 15);
  EXPECT_GE(get(ca, "waited") + get(cb, "waited"), 1) << "no process overlapped the compile: the test proved nothing";
  // The node that did not compile was served through Redis.
  const auto& other = get(ca, "misses") == 1 ? cb : ca;
  EXPECT_GT(get(other, "tier.0.hits"), 0);
  EXPECT_EQ(get(ca, "errors") + get(cb, "errors"), 0);
}

}  // namespace
}  // namespace nvrtc_cache
