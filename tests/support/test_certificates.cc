#include "tests/support/test_certificates.h"

#include <gtest/gtest.h>

#include <fstream>

namespace nvrtc_cache::testing {

bool TestCertificates::run(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"/usr/bin/openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  const ProcessResult result = run_process(argv, {}, dir_.path(), 60);
  if (result.exit_code != 0) ADD_FAILURE() << "openssl " << args[0] << " failed: " << result.err;
  return result.exit_code == 0;
}

TestCertificates::TestCertificates() {
  const std::string d = dir_.path();
  {
    std::ofstream server(d + "/server.ext");
    server << "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n";
    std::ofstream client(d + "/client.ext");
    client << "extendedKeyUsage=clientAuth\n";
  }
  auto key = [&](const std::string& name) {
    return run({"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", d + "/" + name + ".key"});
  };
  auto ca = [&](const std::string& name, const std::string& subject) {
    return key(name) && run({"req", "-x509", "-new", "-key", d + "/" + name + ".key", "-subj", subject, "-days", "1",
                             "-out", d + "/" + name + ".crt"});
  };
  auto leaf = [&](const std::string& name, const std::string& subject) {
    return key(name) &&
           run({"req", "-new", "-key", d + "/" + name + ".key", "-subj", subject, "-out", d + "/" + name + ".csr"}) &&
           run({"x509", "-req", "-in", d + "/" + name + ".csr", "-CA", d + "/ca.crt", "-CAkey", d + "/ca.key",
                "-CAcreateserial", "-days", "1", "-extfile", d + "/" + name + ".ext", "-out", d + "/" + name + ".crt"});
  };
  ok_ = ca("ca", "/CN=nvrtc-cache test CA") && ca("other-ca", "/CN=another CA") && leaf("server", "/CN=localhost") &&
        leaf("client", "/CN=nvrtc-cache client");
}

}  // namespace nvrtc_cache::testing
