// The Redis tier's refusals and failures against real redis-server processes (a wrong password, an
// ACL user, a slow or unresolvable host, a killed or frozen server, a full one, a stale pooled
// connection) and, for what a real server never sends, a fake server whose bytes the test controls.
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
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "store/remote/redis/resp_connection.h"
#include "store/remote/tier.h"
#include "tests/support/allocation_tracking.h"
#include "tests/support/peak_memory.h"
#include "tests/support/redis_server.h"
#include "tests/support/redis_tier_testing.h"

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
using namespace redis_tier_testing;
using testing::RedisServer;
using testing::RedisServerOptions;
using Reply = redis::Reply;

// ---------------------------------------------------------------------------------------------
// Refusals and failures

TEST(RedisTier, WrongPasswordIsRefusedWithoutShowingIt) {
  RedisServer server;
  ASSERT_TRUE(server.ok());
  const std::string wrong = "not-the-password-91c2";
  auto tier = make(tcp_url(server.port(), wrong));
  const std::string name = "redis://127.0.0.1:" + std::to_string(server.port());
  for (const TierResult& outcome :
       {tier->get("key", in(kGenerous)), tier->put("key", "v", in(kGenerous)), tier->check(in(kGenerous))}) {
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
  ASSERT_EQ(
      server
          .command({"ACL", "SETUSER", "reader", "on", ">reader-pw-5d1e", "~nvrtc-cache:*", "+get", "+ping", "+select"})
          .kind,
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
      if (then_ == Then::kClose)
        close(fd);
      else
        open_.push_back(fd);
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
    const std::size_t largest =
        testing::largest_allocation_during([&] { got = tier->get("key", in(options.timeout)); });
    EXPECT_EQ(got.code, TierCode::kError) << c.name << ": " << got.detail;
    EXPECT_LT(largest, 256u << 10) << c.name;
    EXPECT_LT(elapsed_ms(start), 1500) << c.name << " waited for the deadline instead of failing";
  }
}

// Mutated and spliced replies through a socketpair: every reply read is well-formed and within the
// cap, nothing allocates beyond the input buffer and the cap, and reading always ends (EOF).
TEST(RespConnection, ArbitraryBytesNeverCrashOrOverAllocate) {
  const std::vector<std::string> seeds{"+OK\r\n", "-ERR wrong\r\n",    ":123\r\n",
                                       ":-9\r\n", "$5\r\nhello\r\n",   "$0\r\n\r\n",
                                       "$-1\r\n", "*1\r\n$1\r\nx\r\n", "$4096\r\n"};
  constexpr std::uint64_t kCap = 4096;
  std::mt19937 engine(20261122);
  int replies = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string input;
    for (int parts = 1 + static_cast<int>(engine() % 4); parts > 0; --parts) input += seeds[engine() % seeds.size()];
    for (int flips = static_cast<int>(engine() % 4); flips > 0; --flips) {
      input[engine() % input.size()] =
          static_cast<char>(engine() % 4 == 0 ? engine() : "\r\n$:+-*0123456789"[engine() % 17]);
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

// A Redis Cluster node whose CLUSTER NODES reply is ~16 MB (one master's line, one range repeated):
// the tier refuses the reply from its length line (kMaxClusterNodesReply), so the operation fails
// at once instead of reading, parsing and applying it, and allocates nothing near its size.
TEST(RedisTier, AHugeClusterSlotMapIsRefusedWithinTheTimeout) {
  std::string map = "0123456789abcdef0123456789abcdef01234567 127.0.0.1:1@2 myself,master - 0 0 1 connected";
  while (map.size() < 16'000'000) map += " 0-16383";
  map += "\n";
  FakeServer fake("$" + std::to_string(map.size()) + "\r\n" + map + "\r\n", FakeServer::Then::kClose);
  std::string problem;
  const auto url = parse_tier_url("redis+cluster://127.0.0.1:" + std::to_string(fake.port()), &problem);
  ASSERT_TRUE(url.has_value()) << problem;
  TierOptions options = tier_options(*url, &problem);
  auto tier = make(*url, options);
  ASSERT_NE(tier, nullptr);
  TierResult got;
  const auto start = Clock::now();
  const auto growth = testing::peak_rss_growth_during([&] { got = tier->get("key", in(options.timeout)); });
  const long long ms = elapsed_ms(start);
  std::fprintf(stderr, "16 MB CLUSTER NODES: %lld ms, peak RSS +%.1f MiB: %s\n", ms,
               static_cast<double>(growth.value_or(0)) / (1 << 20), got.detail.c_str());
  EXPECT_NE(got.code, TierCode::kOk) << got.detail;
  EXPECT_EQ(got.value, "");
  EXPECT_LT(ms, options.timeout.count() + 1500);
  ASSERT_TRUE(growth.has_value()) << "VmHWM cannot be reset here";
  EXPECT_LT(*growth, options.max_entry_size + (32u << 20));
  EXPECT_LT(*growth, 8u << 20) << "the reply was read";
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
