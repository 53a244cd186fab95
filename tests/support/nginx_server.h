// Test support: a real nginx (/usr/sbin/nginx, Debian's nginx-light: WebDAV PUT/DELETE and TLS) of
// the test's own, serving an HTTP cache on a free loopback port from a temporary directory: GET,
// HEAD, PUT (creating directories) and DELETE under <dir>/data, as ccache's and nvrtc-cache's HTTP
// tiers expect of a WebDAV server. Optionally over TLS (a test PKI's server.crt/server.key), with
// basic auth (an htpasswd made by `openssl passwd -apr1`) or a required bearer token, and with
// fixed error answers under /status/<code>/ (403, 500, 301 ...). The access log records each
// request's method and path (requests()). The constructor returns once the port accepts
// connections; the destructor stops nginx (SIGQUIT, then SIGKILL) and its workers.
// Contract: test-only; blocking; not thread-safe. A server that cannot be started fails the current
// test (ok() is false then).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace nvrtc_cache::testing {

struct NginxServerOptions {
  std::string tls_directory;  // serve TLS with server.crt/server.key from here (tests/support/test_certificates.h)
  std::string user;           // basic auth: this user and password
  std::string password;
  std::string bearer_token;  // require "Authorization: Bearer <token>"
};

class NginxServer {
 public:
  explicit NginxServer(NginxServerOptions options = {});
  ~NginxServer();
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  bool ok() const { return pid_ > 0; }
  std::uint16_t port() const { return port_; }
  // "http://127.0.0.1:PORT" or "https://127.0.0.1:PORT" (no credentials, no path).
  std::string url() const;
  // Where the cache's files are (the server's document root).
  std::string data_directory() const { return dir_.path() + "/data"; }
  // "METHOD PATH STATUS" per request served so far, in order.
  std::vector<std::string> requests() const;
  void stop();

 private:
  bool start();
  bool wait_until_accepting();
  NginxServerOptions options_;
  TempDir dir_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

// A free loopback TCP port (free now; the caller binds it right after).
std::uint16_t free_loopback_tcp_port();

}  // namespace nvrtc_cache::testing
