// FloodServer: a hostile server on loopback (127.0.0.1) for the tests: each connection it accepts
// gets its own thread, which reads the request (up to `request_end`), sends `first` once, then
// `piece` again and again (`pause` apart; without one, 64 KiB of pieces per send, faster than the
// client reads) until the client closes the connection, the server is destroyed or 30 s have passed;
// an empty `piece` sends nothing more and holds the connection. Plays interim-response floods,
// endless chunk extensions, bodies, headers and trailers against the HTTP tier
// (tests/integration/http_tier_failures_test.cc) and whole compiles (shim_http_tier_test.cc), and
// a Redis Cluster node's huge CLUSTER NODES reply (shim_redis_cluster_test.cc).
// Contract: test-only, header-only, Linux; the destructor stops and joins every thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace nvrtc_cache::testing {

class FloodServer {
 public:
  // `request_end`: what ends the request read before `first` is sent ("\r\n" for a RESP command).
  FloodServer(std::string first, std::string piece, std::chrono::microseconds pause = {},
              std::string request_end = "\r\n\r\n")
      : first_(std::move(first)), piece_(std::move(piece)), pause_(pause), request_end_(std::move(request_end)) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ok_ = bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 && listen(listener_, 64) == 0 &&
          getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) == 0;
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FloodServer() {
    stopping_ = true;
    acceptor_.join();
    for (std::thread& t : connections_) t.join();
    close(listener_);
  }
  FloodServer(const FloodServer&) = delete;
  FloodServer& operator=(const FloodServer&) = delete;

  bool ok() const { return ok_; }
  std::uint16_t port() const { return port_; }
  std::string url(const std::string& rest = "") const { return "http://127.0.0.1:" + std::to_string(port_) + rest; }
  int accepted() const { return accepted_; }

 private:
  void accept_loop() {
    while (!stopping_) {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++accepted_;
      connections_.emplace_back([this, fd] {
        serve(fd);
        close(fd);
      });
    }
  }

  // Sends all of `text`, giving up when the client is gone or the server stops.
  bool send_all(int fd, std::string_view text) const {
    while (!text.empty() && !stopping_) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return false;
      text.remove_prefix(static_cast<std::size_t>(n));
    }
    return text.empty();
  }

  void serve(int fd) const {
    std::string head;
    char buffer[4096];
    while (head.find(request_end_) == std::string::npos && !stopping_) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) return;
      head.append(buffer, static_cast<std::size_t>(n));
    }
    if (!send_all(fd, first_)) return;
    while (piece_.empty() && !stopping_) {  // nothing more to send: hold the connection until it is closed
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20) > 0 && recv(fd, buffer, sizeof buffer, 0) <= 0) return;
    }
    // Without a pause, pieces go out 64 KiB at a time: faster than the client reads, so its socket
    // never runs dry.
    std::string block = piece_;
    while (pause_.count() == 0 && !piece_.empty() && block.size() < 64 * 1024) block += piece_;
    for (const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
         std::chrono::steady_clock::now() < give_up;) {
      if (!send_all(fd, block)) return;
      if (pause_.count() > 0) std::this_thread::sleep_for(pause_);
    }
  }

  std::string first_, piece_;
  std::chrono::microseconds pause_;
  std::string request_end_;
  int listener_ = -1;
  bool ok_ = false;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::vector<std::thread> connections_;  // the acceptor's only, joined by the destructor
  std::thread acceptor_;
};

}  // namespace nvrtc_cache::testing
