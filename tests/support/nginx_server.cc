#include "tests/support/nginx_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace nvrtc_cache::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kNginx = "/usr/sbin/nginx";

}  // namespace

std::uint16_t free_loopback_tcp_port() {
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

NginxServer::NginxServer(NginxServerOptions options) : options_(std::move(options)) {
  if (access(kNginx, X_OK) != 0) {
    ADD_FAILURE() << kNginx << " is missing (Debian's nginx-light; scripts/setup.sh installs it)";
    return;
  }
  const std::string d = dir_.path();
  mkdir((d + "/data").c_str(), 0755);
  mkdir((d + "/temp").c_str(), 0755);
  if (!options_.user.empty()) {
    const ProcessResult hashed = run_process({"/usr/bin/openssl", "passwd", "-apr1", options_.password});
    std::string hash = hashed.out;
    while (!hash.empty() && hash.back() == '\n') hash.pop_back();
    if (hashed.exit_code != 0 || hash.empty()) {
      ADD_FAILURE() << "openssl passwd failed: " << hashed.err;
      return;
    }
    std::ofstream(d + "/htpasswd") << options_.user << ":" << hash << "\n";
  }
  for (int attempt = 0; attempt < 3 && pid_ <= 0; ++attempt) {
    if (start() && wait_until_accepting()) return;
    stop();
  }
  ADD_FAILURE() << "nginx did not start; its log:\n" << read_file(d + "/error.log");
}

NginxServer::~NginxServer() { stop(); }

std::string NginxServer::url() const {
  return std::string(options_.tls_directory.empty() ? "http" : "https") + "://127.0.0.1:" + std::to_string(port_);
}

bool NginxServer::start() {
  port_ = free_loopback_tcp_port();
  if (port_ == 0) return false;
  const std::string d = dir_.path();
  std::ostringstream conf;
  conf << "daemon off;\nmaster_process on;\nworker_processes 2;\n";
  if (geteuid() == 0) conf << "user root root;\n";
  conf << "error_log " << d << "/error.log warn;\npid " << d << "/nginx.pid;\n"
       << "events { worker_connections 512; }\n"
       << "http {\n"
       << "  log_format cache '$request_method $uri $status';\n"
       << "  access_log " << d << "/access.log cache;\n"
       << "  client_body_temp_path " << d << "/temp/body;\n  proxy_temp_path " << d << "/temp/proxy;\n"
       << "  fastcgi_temp_path " << d << "/temp/fastcgi;\n  uwsgi_temp_path " << d << "/temp/uwsgi;\n"
       << "  scgi_temp_path " << d << "/temp/scgi;\n"
       << "  client_max_body_size 512m;\n  keepalive_requests 100000;\n  keepalive_timeout 60s;\n"
       << "  server {\n    listen 127.0.0.1:" << port_ << (options_.tls_directory.empty() ? "" : " ssl") << ";\n";
  if (!options_.tls_directory.empty()) {
    conf << "    ssl_certificate " << options_.tls_directory << "/server.crt;\n"
         << "    ssl_certificate_key " << options_.tls_directory << "/server.key;\n";
  }
  conf << "    root " << d << "/data;\n"
       << "    location /status/ {\n"
       << "      location /status/301/ { return 301 /moved/; }\n"
       << "      location /status/302/ { return 302 http://elsewhere.invalid/; }\n"
       << "      location /status/403/ { return 403; }\n"
       << "      location /status/500/ { return 500; }\n"
       << "      location /status/503/ { return 503; }\n"
       << "    }\n"
       << "    location / {\n"
       << "      dav_methods PUT DELETE;\n      create_full_put_path on;\n      dav_access user:rw group:r all:r;\n";
  if (!options_.user.empty()) conf << "      auth_basic cache;\n      auth_basic_user_file " << d << "/htpasswd;\n";
  if (!options_.bearer_token.empty())
    conf << "      if ($http_authorization != \"Bearer " << options_.bearer_token << "\") { return 401; }\n";
  conf << "    }\n  }\n}\n";
  std::ofstream(d + "/nginx.conf") << conf.str();
  std::ofstream(d + "/access.log", std::ios::trunc);

  std::vector<std::string> argv{kNginx, "-p", d, "-c", d + "/nginx.conf", "-e", d + "/error.log"};
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
    execv(kNginx, raw.data());
    _exit(127);
  }
  pid_ = child;
  return true;
}

bool NginxServer::wait_until_accepting() {
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < give_up) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port_);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool up = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    if (fd >= 0) close(fd);
    if (up) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::vector<std::string> NginxServer::requests() const {
  // nginx logs a request after answering it: wait until the log has been still for 50 ms.
  std::string log = read_file(dir_.path() + "/access.log");
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::string again = read_file(dir_.path() + "/access.log");
    if (again == log) break;
    log = std::move(again);
  }
  std::vector<std::string> out;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

void NginxServer::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGQUIT);  // graceful: the master stops its workers
  const auto give_up = Clock::now() + std::chrono::seconds(5);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (Clock::now() >= give_up) {
      kill(pid_, SIGTERM);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
}

}  // namespace nvrtc_cache::testing
