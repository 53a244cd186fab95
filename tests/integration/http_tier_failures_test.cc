// The HTTP tier against servers that misbehave, played by a small server in the test (a listening
// loopback socket and a thread that answers each connection with a script): a truncated body, a
// slow body (the deadline holds), a body larger than the cap announced or sent chunked, garbage,
// a frozen server, a refused connection, an idle keep-alive connection the server closed (retried
// on a new one), a server that closes during a large PUT (no SIGPIPE), a redirect; and hostile
// servers that flood or trickle without end (interim responses, chunk extensions, bodies, headers,
// trailers), each bounded by the operation's timeout and max-entry-size.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

#include "store/remote/tier.h"
#include "tests/support/flood_server.h"
#include "tests/support/nginx_server.h"
#include "tests/support/peak_memory.h"
#include "tests/support/redis_tier_testing.h"

namespace nvrtc_cache::store::remote {
namespace {

using namespace std::chrono_literals;
using redis_tier_testing::elapsed_ms;
using redis_tier_testing::in;
using redis_tier_testing::kGenerous;

// Reads one request's head (up to the blank line) and, when it announces one, its body.
std::string read_request(int fd) {
  std::string in;
  char buffer[65536];
  std::size_t body = 0;
  for (;;) {
    const auto end = in.find("\r\n\r\n");
    if (end != std::string::npos) {
      const auto cl = in.find("Content-Length: ");
      if (cl != std::string::npos && cl < end) body = std::stoul(in.substr(cl + 16));
      if (in.size() >= end + 4 + body) return in;
    }
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return in;
    in.append(buffer, static_cast<std::size_t>(n));
  }
}

void send_text(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// A loopback server whose every accepted connection runs `script(fd)` on the server's thread.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::function<void(int)> script) : script_(std::move(script)) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(listen(listener_, 16), 0);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (!stopping_) {
        pollfd p{listener_, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0) continue;
        const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        ++connections_;
        script_(fd);
        close(fd);
      }
    });
  }
  ~ScriptedServer() {
    stopping_ = true;
    thread_.join();
    close(listener_);
  }
  std::string url(const std::string& rest = "") const { return "http://127.0.0.1:" + std::to_string(port_) + rest; }
  int connections() const { return connections_; }

 private:
  std::function<void(int)> script_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

std::unique_ptr<Tier> make_http(const std::string& text) {
  std::string problem;
  auto url = parse_tier_url(text, &problem);
  EXPECT_TRUE(url.has_value()) << problem;
  if (!url) return nullptr;
  auto tier = make_tier(*url, tier_options(*url, &problem), &problem);
  EXPECT_NE(tier, nullptr) << problem;
  return tier;
}

TEST(HttpTierFailures, ATruncatedBodyIsAnErrorNeverAPartialValue) {
  ScriptedServer server([](int fd) {
    read_request(fd);
    send_text(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + std::string(10, 'x'));
  });
  const TierResult r = make_http(server.url())->get("k", in(kGenerous));
  EXPECT_EQ(r.code, TierCode::kError);
  EXPECT_EQ(r.value, "");
  EXPECT_NE(r.detail.find("truncated"), std::string::npos) << r.detail;
}

TEST(HttpTierFailures, ASlowBodyCostsNoMoreThanTheDeadline) {
  std::atomic<bool> done{false};
  ScriptedServer server([&](int fd) {
    read_request(fd);
    send_text(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
    for (int i = 0; i < 200 && !done; ++i) {  // a byte every 20 ms: always progress, never done
      send_text(fd, "x");
      std::this_thread::sleep_for(20ms);
    }
  });
  auto tier = make_http(server.url());
  const auto start = Clock::now();
  const TierResult r = tier->get("k", in(300ms));
  done = true;
  EXPECT_EQ(r.code, TierCode::kTimeout) << r.detail;
  EXPECT_LT(elapsed_ms(start), 300 + 150);
}

TEST(HttpTierFailures, AFrozenServerAndARefusedConnectionFailWithinTheirTimeouts) {
  std::atomic<bool> done{false};
  ScriptedServer frozen([&](int) {
    while (!done) std::this_thread::sleep_for(10ms);
  });
  auto start = Clock::now();
  EXPECT_EQ(make_http(frozen.url())->get("k", in(250ms)).code, TierCode::kTimeout);
  EXPECT_LT(elapsed_ms(start), 250 + 150);
  done = true;
  const std::uint16_t closed_port = testing::free_loopback_tcp_port();
  start = Clock::now();
  const TierResult refused = make_http("http://127.0.0.1:" + std::to_string(closed_port))->get("k", in(kGenerous));
  EXPECT_EQ(refused.code, TierCode::kError) << refused.detail;
  EXPECT_LT(elapsed_ms(start), 1000);
}

TEST(HttpTierFailures, ABodyOverTheCapIsRefusedBeforeItIsRead) {
  ScriptedServer announced([](int fd) {
    read_request(fd);
    send_text(fd, "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999\r\n\r\nxx");
  });
  const TierResult a = make_http(announced.url("?max-entry-size=1M"))->get("k", in(kGenerous));
  EXPECT_EQ(a.code, TierCode::kError);
  EXPECT_NE(a.detail.find("larger than the limit"), std::string::npos) << a.detail;
  ScriptedServer chunked([](int fd) {
    read_request(fd);
    send_text(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    const std::string chunk = "100000\r\n" + std::string(0x100000, 'c') + "\r\n";
    for (int i = 0; i < 4; ++i) send_text(fd, chunk);
    send_text(fd, "0\r\n\r\n");
  });
  const TierResult b = make_http(chunked.url("?max-entry-size=1M"))->get("k", in(kGenerous));
  EXPECT_EQ(b.code, TierCode::kError);
  EXPECT_NE(b.detail.find("larger than the limit"), std::string::npos) << b.detail;
}

TEST(HttpTierFailures, AChunkedBodyWithinTheCapIsExact) {
  ScriptedServer chunked([](int fd) {
    read_request(fd);
    send_text(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
  });
  const TierResult r = make_http(chunked.url())->get("k", in(kGenerous));
  ASSERT_EQ(r.code, TierCode::kOk) << r.detail;
  EXPECT_EQ(r.value, "hello world");
}

TEST(HttpTierFailures, GarbageIsAnError) {
  ScriptedServer server([](int fd) {
    read_request(fd);
    send_text(fd, "+OK this is not HTTP\r\n");
  });
  const TierResult r = make_http(server.url())->get("k", in(kGenerous));
  EXPECT_EQ(r.code, TierCode::kError);
  EXPECT_NE(r.detail.find("malformed HTTP response"), std::string::npos) << r.detail;
}

TEST(HttpTierFailures, AnIdleConnectionTheServerClosedIsReplacedWithoutAnError) {
  // Each connection answers one request with keep-alive, then closes: the pooled connection is
  // dead when the next request comes.
  ScriptedServer server([](int fd) {
    read_request(fd);
    send_text(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
  });
  auto tier = make_http(server.url());
  for (int i = 0; i < 5; ++i) {
    const TierResult r = tier->get("k", in(kGenerous));
    EXPECT_EQ(r.code, TierCode::kMiss) << r.detail;
  }
  EXPECT_EQ(server.connections(), 5);
}

TEST(HttpTierFailures, AServerThatClosesDuringALargePutRaisesNoSignal) {
  ScriptedServer server([](int fd) {
    char head[256];
    (void)recv(fd, head, sizeof head, 0);  // the start of the PUT
    const linger reset{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);  // close() sends RST
  });
  // The process has SIGPIPE's default action: a signal would end the test binary.
  const TierResult r = make_http(server.url())->put("k", std::string(32 << 20, 'v'), in(kGenerous));
  EXPECT_TRUE(r.code == TierCode::kError) << r.detail;
}

TEST(HttpTierFailures, ARedirectIsNotFollowed) {
  std::atomic<int> requests{0};
  ScriptedServer server([&](int fd) {
    read_request(fd);
    ++requests;
    send_text(fd, "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:1/x\r\nContent-Length: 0\r\n\r\n");
  });
  const TierResult r = make_http(server.url())->get("k", in(kGenerous));
  EXPECT_EQ(r.code, TierCode::kError);
  EXPECT_NE(r.detail.find("redirects are not followed"), std::string::npos) << r.detail;
  EXPECT_EQ(requests.load(), 1);
}

// ---------------------------------------------------------------------------------------------
// Hostile servers: a reply is bounded in time (the operation's one deadline) and in bytes from its
// first byte, whatever the server floods or trickles; each ends within the tier's timeout + 1.5 s,
// reads no value, and raises the process's peak memory by less than max-entry-size + 32 MiB.

struct HostileCase {
  const char* name;
  std::string first;  // sent once
  std::string piece;  // then sent without end
  std::chrono::microseconds pause{0};
};

void expect_bounded(const HostileCase& c) {
  testing::FloodServer server(c.first, c.piece, c.pause);
  ASSERT_TRUE(server.ok());
  std::string problem;
  const auto url = parse_tier_url(server.url(), &problem);
  ASSERT_TRUE(url.has_value()) << problem;
  const TierOptions options = tier_options(*url, &problem);
  auto tier = make_http(server.url());
  ASSERT_NE(tier, nullptr);
  TierResult got;
  const auto start = Clock::now();
  const auto growth = testing::peak_rss_growth_during([&] { got = tier->get("k", in(options.timeout)); });
  const long long ms = elapsed_ms(start);
  tier.reset();  // closes the connection: the server's flood ends
  std::fprintf(stderr, "%s: %lld ms, peak RSS +%.1f MiB: %s\n", c.name, ms,
               static_cast<double>(growth.value_or(0)) / (1 << 20), got.detail.c_str());
  EXPECT_TRUE(got.code == TierCode::kError || got.code == TierCode::kTimeout) << c.name << ": " << got.detail;
  EXPECT_EQ(got.value, "") << c.name;
  EXPECT_LT(ms, options.timeout.count() + 1500) << c.name;
  ASSERT_TRUE(growth.has_value()) << "VmHWM cannot be reset here";
  EXPECT_LT(*growth, options.max_entry_size + (32u << 20)) << c.name;
}

const std::string kChunkedHead = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

TEST(HttpTierHostile, AFloodOfInterimResponsesEndsWithinTheTimeout) {
  expect_bounded({"1xx flood", "", "HTTP/1.1 100 Continue\r\n\r\n"});
  expect_bounded({"103 flood", "", "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"});
}

TEST(HttpTierHostile, TrickledOrFloodedChunkExtensionsEndWithinTheTimeout) {
  expect_bounded({"chunk extensions flooded", kChunkedHead + "5", ";name=value"});
  expect_bounded({"chunk extensions trickled", kChunkedHead + "5", ";name=value", 200us});
  expect_bounded({"one-byte chunks", kChunkedHead, "1\r\nx\r\n"});
}

TEST(HttpTierHostile, AnEndlessChunkedBodyIsRefusedAtMaxEntrySizeNeverBufferedPastIt) {
  expect_bounded({"endless chunked body", kChunkedHead, "10000\r\n" + std::string(0x10000, 'c') + "\r\n"});
  expect_bounded({"a huge chunk announced", kChunkedHead + "7fffffffffff\r\n", std::string(0x10000, 'c')});
  expect_bounded(
      {"endless body to the close", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", std::string(0x10000, 'b')});
}

TEST(HttpTierHostile, EndlessHeadersAndTrailersEndWithinTheTimeout) {
  expect_bounded({"endless header lines", "HTTP/1.1 200 OK\r\n", "X-Flood: y\r\n"});
  expect_bounded({"endless header value", "HTTP/1.1 200 OK\r\nX-Flood: ", "yyyyyyyy"});
  expect_bounded({"endless trailers", kChunkedHead + "5\r\nhello\r\n0\r\n", "X-Trailer: t\r\n"});
}

TEST(HttpTierHostile, ABodyOfManySmallChunksWithinTheBoundsIsExact) {
  std::string body, framed = kChunkedHead;
  for (int i = 0; i < 16384; ++i) {
    const std::string chunk(256, static_cast<char>('a' + i % 26));
    body += chunk;
    framed += "100;n=v\r\n" + chunk + "\r\n";
  }
  framed += "0\r\nX-Trailer: t\r\n\r\n";
  ScriptedServer server([&](int fd) {
    read_request(fd);
    send_text(fd, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + framed);
  });
  const TierResult r = make_http(server.url())->get("k", in(kGenerous));
  ASSERT_EQ(r.code, TierCode::kOk) << r.detail;
  EXPECT_TRUE(r.value == body);
}

}  // namespace
}  // namespace nvrtc_cache::store::remote
