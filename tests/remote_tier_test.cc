// Shared tiers, in-process: URL parsing and attributes (a password never shows), sealed values
// (round trip; tampered, truncated, oversized, MAC-less values refused), the circuit breaker's state
// machine, the write-behind queue's bounds and flush deadline, the shared-directory tier on a real
// directory, and the tiered store over it (read-through, write-back, write-behind, counters).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "store/remote/breaker.h"
#include "store/remote/file_tier.h"
#include "store/remote/sealed_value.h"
#include "store/remote/secret.h"
#include "store/remote/tier_set.h"
#include "store/remote/tiered_store.h"
#include "store/remote/write_behind.h"
#include "store/memory_store.h"
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
  auto url = parse("file:///mnt/cache/?read-only&connect-timeout=20&timeout=300&prefix=a.b-c_1&ttl=0&max-entry-size=8M");
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
// user information ends at the last '@'. It never shows in a display, a problem or a redacted URL.
TEST(TierUrl, APasswordWithSlashesOrQuestionMarksIsParsedAndNeverShown) {
  for (const std::string password : {"ab/cd+ef==", "a?b/c#d", "//??", "x@y/z"}) {
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
  const char* bad[] = {"redis://:hunter2@", "redis://u:hunter2@host:0", "redis://u:hunter2@host:99999",
                       "redis://u:hunter2@host/notanumber", "ftp://u:hunter2@host", "redis://u:hunter2%zz@host",
                       "hunter2@host", "file://u:hunter2@/x", "file://relative", "redis://u:hunter2@[::1",
                       "redis://u:hunter2@host:", "redis+unix://u:hunter2@otherhost/sock"};
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
  const TierSet set = open_tiers("redis://u:hunter2@host?nope=1  file://" + dir + "  \t ftp://x  redis://u:hunter2@127.0.0.1?shards=a,b", "");
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
  for (const std::string& weak : {std::string("x"), std::string("fifteen bytes!!"), std::string(40, 'a'),
                                  std::string("abababababababababab")}) {
    std::ofstream(path, std::ios::trunc) << weak << "\n";
    problem.clear();
    EXPECT_FALSE(read_secret_file(path, &problem, &warning)) << weak;
    EXPECT_NE(problem.find("head -c 32 /dev/urandom"), std::string::npos) << problem;
    EXPECT_EQ(problem.find(weak), std::string::npos) << "the secret is in the message";
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
    ASSERT_TRUE(writer.enqueue([&, i] {
      std::lock_guard lock(mu);
      order.push_back(i);
      if (std::this_thread::get_id() == caller) other_thread = false;
    }, 10));
  }
  ASSERT_TRUE(writer.flush(std::chrono::steady_clock::now() + 5s));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_TRUE(other_thread);
}

TEST(WriteBehind, BoundedByCountAndBytesAndTheFlushDeadlineHolds) {
  WriteBehind writer({4, 1000});
  std::atomic<bool> release{false};
  ASSERT_TRUE(writer.enqueue([&] { while (!release) std::this_thread::sleep_for(1ms); }, 1));
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
  ASSERT_TRUE(writer.enqueue([&] { while (!hold) std::this_thread::sleep_for(1ms); }, 1));
  while (writer.queued() != 0) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(writer.enqueue([] {}, 600));
  EXPECT_FALSE(writer.enqueue([] {}, 600));
  EXPECT_FALSE(writer.enqueue([] {}, 5000));
  hold = true;
  ASSERT_TRUE(writer.flush(std::chrono::steady_clock::now() + 5s));
}

// ---- File tier ----

struct FileTierFixture : ::testing::Test {
  void SetUp() override { dir = temp_dir(); }
  void TearDown() override { fs::remove_all(dir); }
  std::unique_ptr<Tier> tier(const std::string& attributes = "") {
    std::string problem;
    auto url = parse_tier_url("file://" + dir + attributes, &problem);
    EXPECT_TRUE(url) << problem;
    const TierOptions options = tier_options(*url, &problem);
    EXPECT_EQ(problem, "");
    return make_file_tier(*url, options, &problem);
  }
  Deadline soon() const { return Clock::now() + 5s; }
  std::string dir;
};

TEST_F(FileTierFixture, PutGetAndAtomicLayout) {
  auto t = tier();
  EXPECT_EQ(t->get("k", soon()).code, TierCode::kMiss);
  ASSERT_TRUE(t->put("k", "value-1", soon()).ok());
  const TierResult r = t->get("k", soon());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value, "value-1");
  ASSERT_TRUE(t->put("k", "value-2", soon()).ok());
  EXPECT_EQ(t->get("k", soon()).value, "value-2");
  const std::string file = dir + "/nvrtc-cache/" + file_tier_entry_name("k");
  EXPECT_TRUE(fs::is_regular_file(file));
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u);  // no temporaries left behind
  EXPECT_TRUE(t->check(soon()).ok());
  EXPECT_EQ(t->get("k", Clock::now() - 1ms).code, TierCode::kTimeout);
  EXPECT_EQ(t->put("k", "v", Clock::now() - 1ms).code, TierCode::kTimeout);
}

TEST_F(FileTierFixture, ReadOnlyRefusesWritesAndLinksAreNotFollowed) {
  ASSERT_TRUE(tier()->put("k", "v", soon()).ok());
  auto ro = tier("?read-only");
  EXPECT_FALSE(ro->writable());
  EXPECT_EQ(ro->put("k2", "v", soon()).code, TierCode::kRefused);
  EXPECT_EQ(ro->get("k", soon()).value, "v");
  const std::string file = dir + "/nvrtc-cache/" + file_tier_entry_name("link");
  fs::create_directories(fs::path(file).parent_path());
  fs::create_symlink(dir + "/nvrtc-cache/" + file_tier_entry_name("k"), file);
  EXPECT_EQ(ro->get("link", soon()).code, TierCode::kError);
}

TEST_F(FileTierFixture, AMissingDirectoryIsAMissToReadAndAnErrorToWrite) {
  std::string problem;
  auto url = parse_tier_url("file://" + dir + "/absent", &problem);
  auto t = make_file_tier(*url, tier_options(*url, &problem), &problem);
  EXPECT_EQ(t->get("k", soon()).code, TierCode::kMiss);
  EXPECT_EQ(t->put("k", "v", soon()).code, TierCode::kError);
  EXPECT_FALSE(t->check(soon()).ok());
  EXPECT_FALSE(fs::exists(dir + "/absent"));
}

TEST_F(FileTierFixture, EvictionRemovesTheOldestFirst) {
  auto t = tier();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(t->put("k" + std::to_string(i), std::string(1000, 'x'), soon()).ok());
    const std::string file = dir + "/nvrtc-cache/" + file_tier_entry_name("k" + std::to_string(i));
    const timespec times[2] = {{1'000'000 + i, 0}, {1'000'000 + i, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
  }
  const FileTierEviction e = evict_file_tier("file://" + dir, 4500);
  EXPECT_EQ(e.problem, "");
  EXPECT_EQ(e.files_before, 10u);
  EXPECT_EQ(e.bytes_before, 10000u);
  EXPECT_EQ(e.files_removed, 6u);
  EXPECT_EQ(e.bytes_after, 4000u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(t->get("k" + std::to_string(i), soon()).ok(), i >= 6) << i;
  EXPECT_NE(evict_file_tier("redis://h", 1).problem, "");
}

// ---- Tiered store ----

struct TieredFixture : FileTierFixture {
  std::unique_ptr<TieredStore> tiered(const std::string& attributes = "", const Secret* secret = nullptr) {
    std::vector<ConfiguredTier> tiers;
    std::string problem;
    auto url = parse_tier_url("file://" + dir + attributes, &problem);
    ConfiguredTier c;
    c.options = tier_options(*url, &problem);
    c.tier = make_file_tier(*url, c.options, &problem);
    tiers.push_back(std::move(c));
    auto local = std::make_unique<MemoryStore>(1 << 30);
    return std::make_unique<TieredStore>(std::move(local), std::move(tiers),
                                         secret ? std::optional<Secret>(*secret) : std::nullopt,
                                         [this](std::string_view, std::string_view m) { logged.emplace_back(m); },
                                         writer);
  }
  std::int64_t counter(TieredStore& s, TierCounter c) {
    (void)s.add_counters({});
    const Counters all = s.counters();
    const auto it = all.find(tier_counter_name(0, c));
    return it == all.end() ? 0 : it->second;
  }
  WriteBehind writer{WriteBehind::Limits{}};
  std::vector<std::string> logged;
};

TEST_F(TieredFixture, WriteBehindThenReadThroughThenLocal) {
  auto a = tiered();
  ASSERT_TRUE(a->put("key", "payload"));
  ASSERT_TRUE(a->flush(5s));
  EXPECT_EQ(counter(*a, TierCounter::writes), 1);
  auto b = tiered();  // another node: its own local store, the same tier
  EXPECT_EQ(b->local().get("key"), std::nullopt);
  EXPECT_EQ(b->get("key"), "payload");
  EXPECT_EQ(counter(*b, TierCounter::hits), 1);
  EXPECT_EQ(b->local().get("key"), "payload");  // written back
  fs::remove_all(dir + "/nvrtc-cache");
  EXPECT_EQ(b->get("key"), "payload");  // now local
  EXPECT_EQ(counter(*b, TierCounter::hits), 1);
  {
    const SharedLookups local_only(false);
    EXPECT_EQ(b->get("other"), std::nullopt);
  }
  EXPECT_EQ(counter(*b, TierCounter::misses), 0);
  EXPECT_EQ(b->get("other"), std::nullopt);
  EXPECT_EQ(counter(*b, TierCounter::misses), 1);
}

TEST_F(TieredFixture, GarbageAndForeignValuesAreCountedMisses) {
  auto a = tiered();
  auto t = tier();
  ASSERT_TRUE(t->put("garbage", "not sealed at all", soon()).ok());
  ASSERT_TRUE(t->put("moved", seal_value("another key", "v", nullptr), soon()).ok());
  std::string truncated = seal_value("truncated", std::string(100, 'v'), nullptr);
  truncated.resize(60);
  ASSERT_TRUE(t->put("truncated", truncated, soon()).ok());
  EXPECT_EQ(a->get("garbage"), std::nullopt);
  EXPECT_EQ(a->get("moved"), std::nullopt);
  EXPECT_EQ(a->get("truncated"), std::nullopt);
  EXPECT_EQ(counter(*a, TierCounter::corrupt), 3);
  EXPECT_EQ(a->local().get("garbage"), std::nullopt);
  // The next write replaces the bad value.
  ASSERT_TRUE(a->put("garbage", "good"));
  ASSERT_TRUE(a->flush(5s));
  auto b = tiered();
  EXPECT_EQ(b->get("garbage"), "good");
}

TEST_F(TieredFixture, WithASecretUnsignedValuesAreRefusedAndCounted) {
  const Secret secret = secret_from_bytes("s3cret");
  auto unsigned_writer = tiered();
  ASSERT_TRUE(unsigned_writer->put("k", "v"));
  ASSERT_TRUE(unsigned_writer->flush(5s));
  auto reader = tiered("", &secret);
  EXPECT_EQ(reader->get("k"), std::nullopt);
  EXPECT_EQ(counter(*reader, TierCounter::mac_rejected), 1);
  ASSERT_TRUE(reader->put("k", "signed"));
  ASSERT_TRUE(reader->flush(5s));
  auto other_reader = tiered("", &secret);
  EXPECT_EQ(other_reader->get("k"), "signed");
  for (const auto& m : logged) EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
}

TEST_F(TieredFixture, ReadOnlyAndOversizedValuesAreNotWritten) {
  auto ro = tiered("?read-only");
  ASSERT_TRUE(ro->put("k", "v"));
  ASSERT_TRUE(ro->flush(5s));
  EXPECT_FALSE(fs::exists(dir + "/nvrtc-cache"));
  auto small = tiered("?max-entry-size=1K");
  ASSERT_TRUE(small->put("big", std::string(2000, 'b')));
  ASSERT_TRUE(small->flush(5s));
  EXPECT_EQ(counter(*small, TierCounter::write_drops), 1);
  EXPECT_FALSE(fs::exists(dir + "/nvrtc-cache"));
  EXPECT_EQ(small->get("big"), std::string(2000, 'b'));  // local
}

TEST_F(TieredFixture, AFailingTierOpensItsBreakerAndIsSkipped) {
  fs::remove_all(dir);
  std::ofstream(dir) << "a file, not a directory";
  auto s = tiered();
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(s->put("k" + std::to_string(i), "v"));
  ASSERT_TRUE(s->flush(5s));
  EXPECT_EQ(counter(*s, TierCounter::errors), Breaker::kFailuresToOpen);
  EXPECT_EQ(counter(*s, TierCounter::skipped), 6 - Breaker::kFailuresToOpen);
  EXPECT_EQ(counter(*s, TierCounter::breaker_opened), 1);
  EXPECT_EQ(s->tier_status()[0].breaker, BreakerState::kOpen);
  EXPECT_EQ(s->get("k0"), "v");  // local
  EXPECT_FALSE(logged.empty());
  fs::remove(dir);
  fs::create_directory(dir);
}

TEST_F(TieredFixture, ClaimsAreUnsupportedOnADirectory) {
  auto s = tiered();
  EXPECT_EQ(s->try_claim("abc", 1000ms).code(), ClaimCode::kUnsupported);
}

// A shared directory that also takes claims (kept in memory), standing in for a tier with
// SET NX PX, to check the tiered store's side of cross-node claims.
class ClaimingTier final : public Tier {
 public:
  ClaimingTier(std::unique_ptr<Tier> files, std::vector<std::string>* events) : files_(std::move(files)), events_(events) {}
  const std::string& display_name() const override { return files_->display_name(); }
  bool writable() const override { return true; }
  TierResult get(std::string_view key, Deadline deadline) override { return files_->get(key, deadline); }
  TierResult put(std::string_view key, std::string_view value, Deadline deadline) override {
    record("put " + std::string(key));
    return files_->put(key, value, deadline);
  }
  ClaimCode try_claim(std::string_view key, std::string_view token, std::chrono::milliseconds, Deadline,
                      TierResult*) override {
    std::lock_guard lock(mu_);
    return claims_.emplace(key, token).second ? ClaimCode::kClaimed : ClaimCode::kHeldByOther;
  }
  std::optional<ClaimHolder> claim_holder(std::string_view key, Deadline) override {
    std::lock_guard lock(mu_);
    const auto it = claims_.find(key);
    if (it == claims_.end()) return std::nullopt;
    return ClaimHolder{it->second, std::chrono::milliseconds(1000)};
  }
  bool renew_claim(std::string_view key, std::string_view token, std::chrono::milliseconds, Deadline) override {
    std::lock_guard lock(mu_);
    const auto it = claims_.find(key);
    return it != claims_.end() && it->second == token;
  }
  void release_claim(std::string_view key, std::string_view token, Deadline) override {
    record("release " + std::string(key));
    std::lock_guard lock(mu_);
    if (auto it = claims_.find(std::string(key)); it != claims_.end() && it->second == token) claims_.erase(it);
  }
  TierResult check(Deadline deadline) override { return files_->check(deadline); }

 private:
  void record(std::string event) {
    std::lock_guard lock(mu_);
    events_->push_back(std::move(event));
  }
  std::unique_ptr<Tier> files_;
  std::vector<std::string>* events_;
  std::mutex mu_;
  std::map<std::string, std::string, std::less<>> claims_;
};

TEST_F(TieredFixture, ACrossNodeClaimIsReleasedAfterTheWritesQueuedBeforeIt) {
  std::vector<std::string> events;
  std::string problem;
  auto url = parse_tier_url("file://" + dir + "?prefix=p", &problem);
  std::vector<ConfiguredTier> tiers;
  tiers.push_back({std::make_unique<ClaimingTier>(make_file_tier(*url, tier_options(*url, &problem), &problem), &events),
                   tier_options(*url, &problem)});
  TieredStore node(std::make_unique<MemoryStore>(1 << 20), std::move(tiers), std::nullopt, {}, writer);
  RemoteClaim claim = node.try_claim("abc", 1000ms);
  ASSERT_TRUE(claim.held());
  EXPECT_EQ(node.try_claim("abc", 1000ms).code(), ClaimCode::kHeldByOther);  // another compile, anywhere
  ASSERT_TRUE(node.put("k", "v"));
  claim.release();
  EXPECT_FALSE(claim.held());
  ASSERT_TRUE(node.flush(5s));
  EXPECT_EQ(events, (std::vector<std::string>{"put k", "release p:claim:abc"}));
  RemoteClaim next = node.try_claim("abc", 1000ms);
  EXPECT_TRUE(next.held()) << "the claim was not released";
  next.release();
  ASSERT_TRUE(node.flush(5s));  // before `events` goes
}

TEST(TierCheck, ReportsReachabilityAndWritability) {
  const std::string dir = temp_dir();
  std::vector<std::string> problems;
  const auto checks = check_tiers("file://" + dir + " file://" + dir + "?read-only file://" + dir + "/absent", "", &problems);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_TRUE(checks[0].reachable);
  EXPECT_TRUE(checks[0].writable);
  EXPECT_EQ(checks[0].message, "");
  EXPECT_GE(checks[0].round_trip_ms, 0);
  EXPECT_TRUE(checks[1].reachable);
  EXPECT_FALSE(checks[1].writable);
  EXPECT_EQ(checks[1].message, "read-only");
  EXPECT_FALSE(checks[2].reachable);
  EXPECT_NE(checks[2].message, "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
