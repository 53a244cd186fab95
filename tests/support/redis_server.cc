#include "tests/support/redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>

namespace nvrtc_cache::testing {
namespace {

using store::remote::redis::IoResult;
using store::remote::redis::Reply;
using store::remote::redis::RespConnection;
using store::remote::redis::SocketAddress;
using Clock = std::chrono::steady_clock;

constexpr const char* kRedisServer = "/usr/bin/redis-server";

// A port the kernel just handed out for loopback (free now; the server binds it right after).
std::uint16_t free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  std::uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

// A free loopback port below 45536 whose port + 10000 is free too (a cluster node's bus port);
// 0 when none was found.
std::uint16_t free_cluster_port() {
  std::random_device random;
  for (int attempt = 0; attempt < 200; ++attempt) {
    const auto port = static_cast<std::uint16_t>(20000 + random() % 25000);
    int fds[2] = {-1, -1};
    bool free = true;
    for (int i = 0; i < 2; ++i) {
      fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons(static_cast<std::uint16_t>(port + i * 10000));
      if (fds[i] < 0 || bind(fds[i], reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) free = false;
    }
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
    if (free) return port;
  }
  return 0;
}

SocketAddress loopback(std::uint16_t port) {
  SocketAddress out;
  auto* in = reinterpret_cast<sockaddr_in*>(&out.storage);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  out.length = sizeof(sockaddr_in);
  return out;
}

}  // namespace

RedisServer::RedisServer(RedisServerOptions options) : options_(std::move(options)) {
  if (options_.unix_socket) socket_path_ = dir_.path() + "/redis.sock";
  for (int attempt = 0; attempt < 3 && pid_ <= 0; ++attempt) {
    if (start() && wait_until_answering()) return;
    stop();
  }
  ADD_FAILURE() << "redis-server did not start; its log:\n" << read_file(dir_.path() + "/redis.log");
}

RedisServer::~RedisServer() { stop(); }

bool RedisServer::start() {
  port_ = options_.cluster_bus ? free_cluster_port() : free_loopback_port();
  if (port_ == 0 || dir_.path().empty()) return false;
  std::vector<std::string> argv{kRedisServer,
                                "--port",
                                std::to_string(port_),
                                "--bind",
                                "127.0.0.1",
                                "--save",
                                "",
                                "--appendonly",
                                "no",
                                "--dir",
                                dir_.path(),
                                "--logfile",
                                dir_.path() + "/redis.log",
                                "--daemonize",
                                "no"};
  if (!options_.password.empty()) argv.insert(argv.end(), {"--requirepass", options_.password});
  if (!socket_path_.empty()) argv.insert(argv.end(), {"--unixsocket", socket_path_, "--unixsocketperm", "700"});
  if (!options_.maxmemory.empty()) argv.insert(argv.end(), {"--maxmemory", options_.maxmemory});
  if (!options_.maxmemory_policy.empty()) argv.insert(argv.end(), {"--maxmemory-policy", options_.maxmemory_policy});
  if (!options_.tls_directory.empty()) {
    tls_port_ = free_loopback_port();
    const std::string& t = options_.tls_directory;
    argv.insert(argv.end(), {"--tls-port", std::to_string(tls_port_), "--tls-cert-file", t + "/server.crt",
                             "--tls-key-file", t + "/server.key", "--tls-ca-cert-file", t + "/ca.crt",
                             "--tls-auth-clients", options_.tls_auth_clients});
  }
  argv.insert(argv.end(), options_.extra_arguments.begin(), options_.extra_arguments.end());
  std::vector<char*> raw;
  for (std::string& arg : argv) raw.push_back(arg.data());
  raw.push_back(nullptr);

  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    const int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
    }
    execv(kRedisServer, raw.data());
    _exit(127);
  }
  pid_ = child;
  return true;
}

bool RedisServer::wait_until_answering() {
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  const SocketAddress address = loopback(port_);
  while (Clock::now() < give_up) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;  // exited (port taken by someone else, bad option): the caller retries or fails
      return false;
    }
    IoResult why;
    auto connection = RespConnection::connect({&address, 1}, Clock::now() + std::chrono::milliseconds(200), &why);
    if (connection != nullptr) {
      std::vector<std::string_view> args{"PING"};
      if (!options_.password.empty()) args = {"AUTH", options_.password};
      Reply reply;
      if (connection->command(args, &reply, 1024, Clock::now() + std::chrono::seconds(1)).ok() &&
          reply.kind == Reply::Kind::kStatus) {
        if (socket_path_.empty() || access(socket_path_.c_str(), F_OK) == 0) return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string RedisServer::url(unsigned db) const {
  const std::string auth = options_.password.empty() ? "" : ":" + options_.password + "@";
  return "redis://" + auth + "127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
}

std::string RedisServer::tls_url(unsigned db) const {
  const std::string auth = options_.password.empty() ? "" : ":" + options_.password + "@";
  return "rediss://" + auth + "127.0.0.1:" + std::to_string(tls_port_) + "/" + std::to_string(db);
}

std::string RedisServer::unix_url(unsigned db) const {
  const std::string auth = options_.password.empty() ? "" : ":" + options_.password + "@";
  return "redis+unix://" + auth + socket_path_ + "?db=" + std::to_string(db);
}

void RedisServer::stop() {
  if (pid_ <= 0) return;
  if (frozen_) thaw();
  kill(pid_, SIGTERM);
  const auto give_up = Clock::now() + std::chrono::seconds(5);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (Clock::now() >= give_up) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
}

void RedisServer::freeze() {
  if (pid_ > 0 && kill(pid_, SIGSTOP) == 0) frozen_ = true;
}

void RedisServer::thaw() {
  if (pid_ > 0 && kill(pid_, SIGCONT) == 0) frozen_ = false;
}

void RedisServer::kill9() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  frozen_ = false;
}

Reply RedisServer::command(const std::vector<std::string>& args, unsigned db) const {
  const SocketAddress address = loopback(port_);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  Reply reply;
  reply.kind = Reply::Kind::kError;
  IoResult why;
  auto connection = RespConnection::connect({&address, 1}, deadline, &why);
  auto exchange = [&](std::vector<std::string_view> words) {
    if (!why.ok()) return;
    why = connection->command(words, &reply, 1ull << 30, deadline);
  };
  if (connection != nullptr) {
    if (!options_.password.empty()) exchange({"AUTH", options_.password});
    if (db != 0) exchange({"SELECT", std::to_string(db)});
    std::vector<std::string_view> words(args.begin(), args.end());
    exchange(words);
  }
  if (!why.ok()) {
    ADD_FAILURE() << "redis command " << (args.empty() ? "" : args[0]) << " failed: " << why.detail;
    reply.kind = Reply::Kind::kError;
    reply.text = why.detail;
  }
  return reply;
}

}  // namespace nvrtc_cache::testing
