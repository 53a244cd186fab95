// Test support: a real redis-server (/usr/bin/redis-server) of the test's own, on a free loopback
// port (and optionally a unix socket), with a password, no persistence (--save '', --appendonly
// no), its files in a temporary directory, and optionally a maxmemory limit and policy. The
// constructor returns once the server answers PING; the destructor stops it. With tls_directory
// it also serves TLS on a second loopback port (the plain port stays, for the test's own commands). The server dies
// with the test process (PR_SET_PDEATHSIG), so a crashed test leaves none behind. Contract: test-only; blocking; not
// thread-safe (one thread drives a server). A server that cannot be started fails the current test (ok() is false
// then).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/remote/redis/resp_connection.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {

struct RedisServerOptions {
  std::string password = "test-secret-7f3a";  // empty: no password
  bool unix_socket = false;                   // also listen on <temp dir>/redis.sock
  std::string maxmemory;                      // e.g. "2mb"; empty: no limit
  std::string maxmemory_policy;               // e.g. "noeviction", "allkeys-lru"
  std::vector<std::string> extra_arguments;   // more redis-server options ("--databases", "4")
  // TLS: also listen on a TLS port with server.crt/server.key/ca.crt from this directory
  // (tests/support/test_certificates.h); tls_auth_clients is redis-server's tls-auth-clients.
  std::string tls_directory;
  std::string tls_auth_clients = "optional";
  // Redis Cluster mode needs its port + 10000 (the cluster bus) free too, and at most 55535.
  bool cluster_bus = false;
};

class RedisServer {
 public:
  explicit RedisServer(RedisServerOptions options = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  bool ok() const { return pid_ > 0; }
  std::uint16_t port() const { return port_; }
  std::uint16_t tls_port() const { return tls_port_; }             // 0 without tls_directory
  const std::string& socket_path() const { return socket_path_; }  // empty without unix_socket
  const std::string& password() const { return options_.password; }
  pid_t pid() const { return pid_; }
  const std::string& directory() const { return dir_.path(); }

  // "redis://:PASSWORD@127.0.0.1:PORT/DB" and "redis+unix:///…/redis.sock?db=DB".
  std::string url(unsigned db = 0) const;
  std::string unix_url(unsigned db = 0) const;
  // "rediss://:PASSWORD@127.0.0.1:TLS_PORT/DB" (attributes are the caller's to add).
  std::string tls_url(unsigned db = 0) const;

  // Stops the server: SIGTERM, then SIGKILL after 5 s; reaps it. Idempotent.
  void stop();
  // SIGSTOP / SIGCONT: the server keeps its sockets but answers nothing while frozen.
  void freeze();
  void thaw();
  // SIGKILL, reaped: connections see a reset or EOF.
  void kill9();

  // One command on a fresh, authenticated connection to database `db` (for a test's assertions:
  // PTTL, DBSIZE, CLIENT ID, CONFIG SET ...); a failed exchange fails the test and returns a
  // kError reply with the reason.
  store::remote::redis::Reply command(const std::vector<std::string>& args, unsigned db = 0) const;

 private:
  bool start();
  bool wait_until_answering();

  RedisServerOptions options_;
  TempDir dir_;
  std::uint16_t port_ = 0;
  std::uint16_t tls_port_ = 0;
  std::string socket_path_;
  pid_t pid_ = -1;
  bool frozen_ = false;
};

}  // namespace nvrtc_cache::testing
