#include "store/remote/net/tls_attributes.h"

namespace nvrtc_cache::store::remote::net {
namespace {

constexpr std::string_view kTlsAttributes[] = {"tls-ca-file", "tls-ca-dir", "tls-cert-file", "tls-key-file",
                                               "tls-server-name"};

}  // namespace

bool is_tls_attribute(std::string_view name) {
  for (std::string_view tls : kTlsAttributes) {
    if (name == tls) return true;
  }
  return false;
}

std::string read_tls_attributes(const std::map<std::string, std::string, std::less<>>& query, bool tls,
                                std::string_view tls_url, TlsSettings* settings) {
  for (std::string_view attribute : kTlsAttributes) {
    const auto it = query.find(attribute);
    if (it == query.end()) continue;
    if (!tls) return std::string(attribute) + " needs " + std::string(tls_url);
    if (it->second.empty()) return std::string(attribute) + " needs a value";
    if (attribute != "tls-server-name" && it->second.front() != '/')
      return std::string(attribute) + " must be an absolute path";
    std::string* setting = attribute == "tls-ca-file"     ? &settings->ca_file
                           : attribute == "tls-ca-dir"    ? &settings->ca_dir
                           : attribute == "tls-cert-file" ? &settings->cert_file
                           : attribute == "tls-key-file"  ? &settings->key_file
                                                          : &settings->server_name;
    *setting = it->second;
  }
  if (settings->cert_file.empty() != settings->key_file.empty()) return "tls-cert-file and tls-key-file go together";
  return "";
}

}  // namespace nvrtc_cache::store::remote::net
