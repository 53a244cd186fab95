// Shared tiers, in-process: URL parsing and attributes (a password never shows), secrets, sealed
// values (round trip; tampered, truncated, oversized, MAC-less values refused), the circuit
// breaker's state machine, and the write-behind queue's bounds and flush deadline. The tiers
// themselves: tiered_store_test.cc.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "store/remote/breaker.h"
#include "store/remote/sealed_value.h"
#include "store/remote/secret.h"
#include "store/remote/tier_set.h"
#include "store/remote/write_behind.h"
#include "util/binary_io.h"

namespace nvrtc_cache::store::remote {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "nvrtc-tier-XXXXXX").string();
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

std::optional<TierUrl> parse(std::string_view text, std::string* problem = nullptr) {
  std::string ignored;
  return parse_tier_url(text, problem ? problem : &ignored);
}

// ---- URLs ----

TEST(TierUrl, RedisWithEverything) {
  auto url = parse("redis://alice:s%40cret@cache.example:6380/3?timeout=50&prefix=team&ttl=3600");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->scheme, "redis");
  EXPECT_EQ(url->user, "alice");
  EXPECT_EQ(url->password, "s@cret");
  EXPECT_EQ(url->host, "cache.example");
  EXPECT_EQ(url->port, 6380);
  EXPECT_EQ(url->query.at("db"), "3");
  EXPECT_EQ(url->display(), "redis://alice:***@cache.example:6380?db=3&prefix=team&timeout=50&ttl=3600");
  std::string problem;
  const TierOptions options = tier_options(*url, &problem);
  EXPECT_EQ(problem, "");
  EXPECT_EQ(options.timeout, 50ms);
  EXPECT_EQ(options.prefix, "team");
  EXPECT_EQ(options.ttl, 3600s);
}

TEST(TierUrl, RedisForms) {
  auto password_only = parse("redis://pw@host");
  ASSERT_TRUE(password_only);
  EXPECT_EQ(password_only->user, "");
  EXPECT_EQ(password_only->password, "pw");
  EXPECT_EQ(password_only->port, 0);
  EXPECT_EQ(password_only->display(), "redis://:***@host");
  auto ipv6 = parse("redis://[::1]:7000");
  ASSERT_TRUE(ipv6);
  EXPECT_EQ(ipv6->host, "::1");
  EXPECT_EQ(ipv6->port, 7000);
  auto unix_socket = parse("redis+unix:///run/redis.sock?db=2");
  ASSERT_TRUE(unix_socket);
  EXPECT_EQ(unix_socket->path, "/run/redis.sock");
  EXPECT_EQ(unix_socket->query.at("db"), "2");
  auto unix_auth = parse("redis+unix://:pw@localhost/run/redis.sock");
  ASSERT_TRUE(unix_auth);
  EXPECT_EQ(unix_auth->password, "pw");
  EXPECT_EQ(unix_auth->path, "/run/redis.sock");
}

TEST(TierUrl, FileAndEveryAttribute) {
  auto url =
      parse("file:///mnt/cache/?read-only&connect-timeout=20&timeout=300&prefix=a.b-c_1&ttl=0&max-entry-size=8M");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->path, "/mnt/cache");
  std::string problem;
  const TierOptions options = tier_options(*url, &problem);
  EXPECT_EQ(problem, "");
  EXPECT_TRUE(options.read_only);
  EXPECT_EQ(options.connect_timeout, 20ms);
  EXPECT_EQ(options.timeout, 300ms);
  EXPECT_EQ(options.prefix, "a.b-c_1");
  EXPECT_EQ(options.ttl, 0s);
  EXPECT_EQ(options.max_entry_size, 8u << 20);
  const TierOptions defaults = tier_options(*parse("file://localhost/x"), &problem);
  EXPECT_FALSE(defaults.read_only);
  EXPECT_EQ(defaults.timeout, 1000ms);
  EXPECT_EQ(defaults.prefix, "nvrtc-cache");
  EXPECT_EQ(defaults.max_entry_size, 64u << 20);
}

// A password holding '/', '?' or '#' unencoded (base64 and random passwords do) is the password: the
// user information ends at the last '@'. It never shows in a display or a problem (every kind of
// URL, and ambiguous ones: shown_url_test.cc).
TEST(TierUrl, APasswordWithSlashesOrQuestionMarksIsParsedAndNeverShown) {
  for (const std::string password : {"ab/cd+ef==", "a?b/c#d", "//??", "x/y@z"}) {
    const std::string text = "redis://user:" + password + "@cache.example:6380/2?timeout=500";
    std::string problem;
    const auto url = parse_tier_url(text, &problem);
    ASSERT_TRUE(url) << problem;
    EXPECT_EQ(url->password, password);
    EXPECT_EQ(url->user, "user");
    EXPECT_EQ(url->host, "cache.example");
    EXPECT_EQ(url->port, 6380);
    EXPECT_EQ(url->display().find(password), std::string::npos) << url->display();
    const auto bad = parse_tier_url("redis://user:" + password + "@cache.example:99999", &problem);
    EXPECT_FALSE(bad);
    EXPECT_EQ(problem.find(password), std::string::npos) << problem;
  }
  // A shared directory's path may hold '@'.
  const auto dir = parse_tier_url("file:///mnt/team@site/cache", nullptr);
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->path, "/mnt/team@site/cache");
}

TEST(TierUrl, BadInputNamesTheProblemWithoutThePassword) {
  const char* bad[] = {"redis://:hunter2@",
                       "redis://u:hunter2@host:0",
                       "redis://u:hunter2@host:99999",
                       "redis://u:hunter2@host/notanumber",
                       "ftp://u:hunter2@host",
                       "redis://u:hunter2%zz@host",
                       "hunter2@host",
                       "file://u:hunter2@/x",
                       "file://relative",
                       "redis://u:hunter2@[::1",
                       "redis://u:hunter2@host:",
                       "redis+unix://u:hunter2@otherhost/sock"};
  for (const char* text : bad) {
    std::string problem;
    EXPECT_FALSE(parse(text, &problem)) << text;
    EXPECT_FALSE(problem.empty()) << text;
    EXPECT_EQ(problem.find("hunter2"), std::string::npos) << problem;
  }
}

TEST(TierUrl, BadAttributesKeepDefaultsAndNameTheAttribute) {
  auto url = parse("redis://u:hunter2@host?colour=blue&timeout=-1&prefix=a/b&max-entry-size=0&read-only=maybe&ttl=x");
  ASSERT_TRUE(url);
  std::string problem;
  const TierOptions options = tier_options(*url, &problem);
  for (const char* name : {"colour", "timeout", "prefix", "max-entry-size", "read-only", "ttl"}) {
    EXPECT_NE(problem.find(name), std::string::npos) << name << " in " << problem;
  }
  EXPECT_EQ(problem.find("hunter2"), std::string::npos);
  EXPECT_NE(problem.find("redis://u:***@host"), std::string::npos) << problem;
  EXPECT_EQ(options.timeout, 1000ms);
  EXPECT_EQ(options.prefix, "nvrtc-cache");
  std::string file_problem;
  (void)tier_options(*parse("file:///x?db=1"), &file_problem);
  EXPECT_NE(file_problem.find("unknown attribute 'db'"), std::string::npos);
}

TEST(TierSet, SkipsBadUrlsAndKeepsTheRest) {
  const std::string dir = temp_dir();
  const TierSet set = open_tiers(
      "redis://u:hunter2@host?nope=1  file://" + dir + "  \t ftp://x  redis://u:hunter2@127.0.0.1?shards=a,b", "");
  ASSERT_EQ(set.tiers.size(), 1u);
  EXPECT_EQ(set.tiers[0].tier->display_name(), "file://" + dir);
  ASSERT_EQ(set.problems.size(), 3u);
  for (const auto& p : set.problems) EXPECT_EQ(p.find("hunter2"), std::string::npos) << p;
  // The Redis tier refuses its own malformed attribute (no name resolution needed to say so).
  EXPECT_NE(set.problems[2].find("shards need both"), std::string::npos) << set.problems[2];
  fs::remove_all(dir);
}

TEST(TierSet, AnUnreadableSecretDisablesEveryTier) {
  const std::string dir = temp_dir();
  const TierSet set = open_tiers("file://" + dir, dir + "/no-such-secret");
  EXPECT_TRUE(set.tiers.empty());
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_NE(set.problems[0].find("NVRTC_CACHE_REMOTE_SECRET_FILE"), std::string::npos);
  fs::remove_all(dir);
}

TEST(TierSet, ASecretOthersMayReadIsUsedWithAWarningNotAProblem) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/secret";
  std::ofstream(path) << "correct horse battery staple\n";
  ::chmod(path.c_str(), 0644);
  const TierSet set = open_tiers("file://" + dir + "/tier", path);
  EXPECT_EQ(set.tiers.size(), 1u);
  EXPECT_TRUE(set.secret);
  EXPECT_TRUE(set.problems.empty());
  ASSERT_EQ(set.warnings.size(), 1u);
  EXPECT_NE(set.warnings[0].find("readable by group or others"), std::string::npos) << set.warnings[0];
  // `nvrtc-cache remote check` still reports it.
  std::vector<std::string> problems;
  (void)check_tiers("file://" + dir + "/tier", path, &problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], set.warnings[0]);
  fs::remove_all(dir);
}

// ---- Secret ----

TEST(Secret, FileContentsNeverInMessagesAndLongFilesHashedDown) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/secret";
  std::ofstream(path) << "correct horse battery\n";
  ::chmod(path.c_str(), 0600);
  std::string problem, warning;
  auto secret = read_secret_file(path, &problem, &warning);
  ASSERT_TRUE(secret);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(secret->size, 21u);  // the trailing newline is not part of it
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(secret->key.data()), secret->size), "correct horse battery");
  ::chmod(path.c_str(), 0644);
  secret = read_secret_file(path, &problem, &warning);
  ASSERT_TRUE(secret);
  EXPECT_NE(warning.find("readable by group or others"), std::string::npos);
  EXPECT_EQ(warning.find("correct horse"), std::string::npos);
  std::string long_secret;
  for (int i = 0; i < 200; ++i) long_secret.push_back(static_cast<char>('!' + i % 90));
  std::ofstream(path) << long_secret;
  secret = read_secret_file(path, &problem, &warning);
  ASSERT_TRUE(secret);
  EXPECT_EQ(secret->size, 64u);
  std::ofstream(path, std::ios::trunc).flush();
  EXPECT_FALSE(read_secret_file(path, &problem, &warning));
  EXPECT_NE(problem.find("shared tiers are not used"), std::string::npos);
  fs::remove_all(dir);
}

// A secret short or plain enough to be found by trying is refused, saying how to make one; so is a
// FIFO named as the secret file (refused at once, never waited on).
TEST(Secret, ShortOrPlainSecretsAndFifosAreRefused) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/secret";
  std::string problem, warning;
  for (const std::string& weak :
       {std::string("x"), std::string("fifteen bytes!!"), std::string(40, 'a'), std::string("abababababababababab")}) {
    std::ofstream(path, std::ios::trunc) << weak << "\n";
    problem.clear();
    EXPECT_FALSE(read_secret_file(path, &problem, &warning)) << weak;
    EXPECT_NE(problem.find("head -c 32 /dev/urandom"), std::string::npos) << problem;
    std::string without_path = problem;  // the path's random part may hold the secret's letters
    for (std::size_t at; (at = without_path.find(path)) != std::string::npos;) without_path.erase(at, path.size());
    EXPECT_EQ(without_path.find(weak), std::string::npos) << "the secret is in the message: " << problem;
  }
  std::ofstream(path, std::ios::trunc) << "sixteen distinct";
  EXPECT_TRUE(read_secret_file(path, &problem, &warning));
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  problem.clear();
  EXPECT_FALSE(read_secret_file(fifo, &problem, &warning));  // returns: a blocking open would hang here
  EXPECT_NE(problem.find("not a regular file"), std::string::npos) << problem;
  fs::remove_all(dir);
}

// ---- Sealed values ----

TEST(SealedValue, RoundTripSignedAndUnsigned) {
  const Secret secret = secret_from_bytes("k1");
  const std::string payload(10000, 'p');
  for (const Secret* s : {static_cast<const Secret*>(nullptr), &secret}) {
    const std::string sealed = seal_value("key", payload, s);
    EXPECT_EQ(sealed.size(), sealed_size(3, payload.size(), s != nullptr));
    const Unsealed u = unseal_value("key", sealed, s);
    ASSERT_EQ(u.code, UnsealCode::kOk);
    EXPECT_EQ(u.payload, payload);
    EXPECT_EQ(unseal_value("kez", sealed, s).code, UnsealCode::kWrongKey);
  }
  EXPECT_EQ(unseal_value("key", seal_value("key", "", nullptr), nullptr).payload, "");
  // Without a secret configured, a signed value is accepted on its checksum.
  EXPECT_EQ(unseal_value("key", seal_value("key", payload, &secret), nullptr).code, UnsealCode::kOk);
}

TEST(SealedValue, EveryFlippedByteTruncationAndExtensionIsRefused) {
  const Secret secret = secret_from_bytes("k1");
  for (const Secret* s : {static_cast<const Secret*>(nullptr), &secret}) {
    const std::string sealed = seal_value("the key", "some payload bytes", s);
    for (std::size_t i = 0; i < sealed.size(); ++i) {
      std::string tampered = sealed;
      tampered[i] = static_cast<char>(tampered[i] ^ 0x20);
      EXPECT_NE(unseal_value("the key", tampered, s).code, UnsealCode::kOk) << i;
    }
    for (std::size_t n = 0; n < sealed.size(); ++n) {
      EXPECT_NE(unseal_value("the key", sealed.substr(0, n), s).code, UnsealCode::kOk) << n;
    }
    EXPECT_NE(unseal_value("the key", sealed + "x", s).code, UnsealCode::kOk);
  }
}

TEST(SealedValue, WithASecretMacLessAndForeignMacsAreRejected) {
  const Secret ours = secret_from_bytes("ours");
  const Secret theirs = secret_from_bytes("theirs");
  EXPECT_EQ(unseal_value("k", seal_value("k", "v", nullptr), &ours).code, UnsealCode::kMacRejected);
  EXPECT_EQ(unseal_value("k", seal_value("k", "v", &theirs), &ours).code, UnsealCode::kMacRejected);
  // Stripping the MAC and clearing the flag leaves a value with a bad checksum or no MAC: refused.
  std::string stripped = seal_value("k", "v", &ours);
  stripped.resize(stripped.size() - kSealedMacSize);
  stripped[8] = 0;
  EXPECT_NE(unseal_value("k", stripped, &ours).code, UnsealCode::kOk);
}

TEST(SealedValue, OversizedLengthsAreRefusedBeforeAnyAllocation) {
  std::string sealed = seal_value("k", "v", nullptr);
  nvrtc_cache::util::store_le(sealed.data() + 13, ~0ull, 8);  // payload length
  EXPECT_EQ(unseal_value("k", sealed, nullptr).code, UnsealCode::kCorrupt);
  sealed = seal_value("k", "v", nullptr);
  nvrtc_cache::util::store_le(sealed.data() + 9, 0xffffffffu, 4);  // key length
  EXPECT_EQ(unseal_value("k", sealed, nullptr).code, UnsealCode::kCorrupt);
  EXPECT_EQ(unseal_value("k", "NVRT", nullptr).code, UnsealCode::kCorrupt);
}

// ---- Breaker ----

TEST(Breaker, OpensAfterThreeFailuresProbesOnceAndCloses) {
  Breaker b;
  auto t = Breaker::Clock::time_point(1h);
  for (int i = 0; i < Breaker::kFailuresToOpen - 1; ++i) b.failed(b.allow(t), t);
  EXPECT_EQ(b.state(t), BreakerState::kClosed);
  b.succeeded(b.allow(t));  // a success resets the count
  for (int i = 0; i < Breaker::kFailuresToOpen - 1; ++i) b.failed(b.allow(t), t);
  EXPECT_EQ(b.state(t), BreakerState::kClosed);
  b.failed(b.allow(t), t);
  EXPECT_EQ(b.state(t), BreakerState::kOpen);
  EXPECT_EQ(b.times_opened(), 1u);
  EXPECT_EQ(b.allow(t + 4999ms), Breaker::Pass::kDenied);
  t += 5s;
  EXPECT_EQ(b.state(t), BreakerState::kHalfOpen);
  const Breaker::Pass probe = b.allow(t);
  EXPECT_EQ(probe, Breaker::Pass::kProbe);
  EXPECT_EQ(b.allow(t), Breaker::Pass::kDenied);  // exactly one probe
  b.failed(probe, t);                             // reopens, cooldown doubled
  EXPECT_EQ(b.allow(t + 9999ms), Breaker::Pass::kDenied);
  t += 10s;
  const Breaker::Pass second = b.allow(t);
  ASSERT_EQ(second, Breaker::Pass::kProbe);
  b.succeeded(second);
  EXPECT_EQ(b.state(t), BreakerState::kClosed);
  EXPECT_EQ(b.allow(t), Breaker::Pass::kClosed);
}

// A timeout has already cost its caller the whole deadline: the next operation must not wait again.
TEST(Breaker, OneTimeoutOpensAtOnceAndAFailedProbeAfterItReopens) {
  Breaker b;
  auto t = Breaker::Clock::time_point(1h);
  b.failed(b.allow(t), t);  // an error: tolerated
  EXPECT_EQ(b.state(t), BreakerState::kClosed);
  b.succeeded(b.allow(t));
  b.failed(b.allow(t), t, Breaker::Failure::kTimeout);
  EXPECT_EQ(b.state(t), BreakerState::kOpen);
  EXPECT_EQ(b.times_opened(), 1u);
  EXPECT_EQ(b.allow(t + 4999ms), Breaker::Pass::kDenied);
  t += 5s;
  const Breaker::Pass probe = b.allow(t);
  ASSERT_EQ(probe, Breaker::Pass::kProbe);
  b.failed(probe, t, Breaker::Failure::kTimeout);  // still frozen: reopens, cooldown doubled
  EXPECT_EQ(b.allow(t + 9999ms), Breaker::Pass::kDenied);
  EXPECT_EQ(b.times_opened(), 1u) << "a failed probe is not a new opening";
  t += 10s;
  const Breaker::Pass second = b.allow(t);
  ASSERT_EQ(second, Breaker::Pass::kProbe);
  b.succeeded(second);
  EXPECT_EQ(b.allow(t), Breaker::Pass::kClosed);
}

TEST(Breaker, CooldownCapsAtSixtySecondsAndALostProbeIsReplaced) {
  Breaker b;
  auto t = Breaker::Clock::time_point(1h);
  for (int i = 0; i < Breaker::kFailuresToOpen; ++i) b.failed(b.allow(t), t);
  for (int round = 0; round < 8; ++round) {
    t += 61s;
    b.failed(b.allow(t), t);
  }
  EXPECT_EQ(b.allow(t + 59s), Breaker::Pass::kDenied);
  t += 60s;
  EXPECT_EQ(b.allow(t), Breaker::Pass::kProbe);  // never reported back
  EXPECT_EQ(b.allow(t + 30s), Breaker::Pass::kDenied);
  EXPECT_EQ(b.allow(t + 61s), Breaker::Pass::kProbe);
}

// ---- Write-behind ----

TEST(WriteBehind, RunsJobsInOrderOffTheCallersThread) {
  WriteBehind writer({16, 1 << 20});
  std::vector<int> order;
  std::mutex mu;
  const auto caller = std::this_thread::get_id();
  std::atomic<bool> other_thread{true};
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(writer.enqueue(
        [&, i] {
          std::lock_guard lock(mu);
          order.push_back(i);
          if (std::this_thread::get_id() == caller) other_thread = false;
        },
        10));
  }
  ASSERT_TRUE(writer.flush(std::chrono::steady_clock::now() + 5s));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_TRUE(other_thread);
}

TEST(WriteBehind, BoundedByCountAndBytesAndTheFlushDeadlineHolds) {
  WriteBehind writer({4, 1000});
  std::atomic<bool> release{false};
  ASSERT_TRUE(writer.enqueue(
      [&] {
        while (!release) std::this_thread::sleep_for(1ms);
      },
      1));
  while (writer.queued() != 0) std::this_thread::sleep_for(1ms);  // the writer took it: it is stuck
  int accepted = 0;
  for (int i = 0; i < 10; ++i) accepted += writer.enqueue([] {}, 1) ? 1 : 0;
  EXPECT_EQ(accepted, 4);
  EXPECT_EQ(writer.queued(), 4u);
  EXPECT_TRUE(writer.enqueue([] {}, 1, /*always=*/true));  // claim releases are never dropped
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(writer.flush(started + 200ms));
  const auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 2s);  // bounded (generous: a loaded machine)
  release = true;
  ASSERT_TRUE(writer.flush(std::chrono::steady_clock::now() + 5s));
  // Bytes: one job of 600 fits, a second does not.
  std::atomic<bool> hold{false};
  ASSERT_TRUE(writer.enqueue(
      [&] {
        while (!hold) std::this_thread::sleep_for(1ms);
      },
      1));
  while (writer.queued() != 0) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(writer.enqueue([] {}, 600));
  EXPECT_FALSE(writer.enqueue([] {}, 600));
  EXPECT_FALSE(writer.enqueue([] {}, 5000));
  hold = true;
  ASSERT_TRUE(writer.flush(std::chrono::steady_clock::now() + 5s));
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
