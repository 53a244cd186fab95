// Test support: a throw-away PKI made with the openssl CLI (/usr/bin/openssl) in a temporary
// directory — a CA, a server certificate for 127.0.0.1 and localhost signed by it, a client
// certificate signed by it, and a second, unrelated CA (a "wrong" trust anchor). EC P-256 keys,
// unencrypted PEM, valid for a day.
// Contract: test-only; blocking; not thread-safe. A PKI that cannot be made fails the current test
// (ok() is false then).
#pragma once

#include <string>

#include "tests/support/process.h"

namespace nvrtc_cache::testing {

class TestCertificates {
 public:
  TestCertificates();
  bool ok() const { return ok_; }
  const std::string& directory() const { return dir_.path(); }
  std::string ca() const { return dir_.path() + "/ca.crt"; }
  std::string other_ca() const { return dir_.path() + "/other-ca.crt"; }
  std::string server_cert() const { return dir_.path() + "/server.crt"; }
  std::string server_key() const { return dir_.path() + "/server.key"; }
  std::string client_cert() const { return dir_.path() + "/client.crt"; }
  std::string client_key() const { return dir_.path() + "/client.key"; }

 private:
  bool run(const std::vector<std::string>& args);
  TempDir dir_;
  bool ok_ = false;
};

}  // namespace nvrtc_cache::testing
