#include "store/remote/net/tls_attributes.h"
#include "store/remote/http/http_config.h"

#include <blake2.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "platform/own_file.h"

namespace nvrtc_cache::store::remote::http {
namespace {

constexpr std::size_t kMaxTokenSize = 16 * 1024;

std::string hex(const unsigned char* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 15]);
  }
  return out;
}

std::string digest(std::string_view bytes) {
  std::array<unsigned char, 32> out{};
  blake2b(out.data(), bytes.data(), nullptr, out.size(), bytes.size(), 0);
  return hex(out.data(), out.size());
}

// A token file's first line (a trailing newline is not part of the token); nullopt with *problem.
std::optional<std::string> read_token(const std::string& path, std::string* problem) {
  // Non-blocking and by a regular file only (platform/own_file.h): a FIFO named here never stalls.
  std::string why;
  std::optional<std::string> token = platform::read_regular_file(path, kMaxTokenSize, &why);
  if (!token && why != "is not a regular file" && !why.starts_with("is larger than")) {
    *problem = "bearer-token-file " + path + " cannot be read" + (why.empty() ? std::string() : ": " + why);
    return std::nullopt;
  }
  if (token) {
    while (!token->empty() && (token->back() == '\n' || token->back() == '\r')) token->pop_back();
  }
  if (!token || token->empty()) {
    *problem = "bearer-token-file " + path + " is not a regular file holding a token (at most 16 KiB)";
    return std::nullopt;
  }
  return token;
}

// A header value must not end the header early (no CR, LF or NUL).
bool header_safe(std::string_view text) { return text.find_first_of(std::string_view("\r\n\0", 3)) == text.npos; }

// Characters a request target may hold as written (RFC 3986 path characters and '%').
bool path_safe(std::string_view path) {
  for (char c : path) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("-._~!$&'()*+,;=:@/%").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool is_http_scheme(std::string_view scheme) { return scheme == "http" || scheme == "https"; }

bool is_http_attribute(std::string_view name) {
  if (name == "layout" || name == "bearer-token" || name == "bearer-token-file") return true;
  return net::is_tls_attribute(name);
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  if (i < bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<HttpConfig> http_config(const TierUrl& url, std::string* problem) {
  const std::string name = url.display();
  auto fail = [&](const std::string& why) -> std::optional<HttpConfig> {
    *problem = name + ": " + why;
    return std::nullopt;
  };
  if (!is_http_scheme(url.scheme)) return fail("not an http:// or https:// URL");
  HttpConfig config;
  config.tls = url.scheme == "https";
  config.host = url.host;
  config.port = url.port != 0 ? url.port : (config.tls ? 443 : 80);
  if (config.host.empty()) return fail("no host");
  if (!header_safe(config.host)) return fail("a malformed host");
  config.base_path = url.path;
  while (!config.base_path.empty() && config.base_path.back() == '/') config.base_path.pop_back();
  if (!config.base_path.empty() && (config.base_path.front() != '/' || !path_safe(config.base_path)))
    return fail("the path holds characters a request path cannot (percent-encode them)");

  if (std::string tls_problem =
          net::read_tls_attributes(url.query, config.tls, "an https:// URL", &config.tls_settings);
      !tls_problem.empty())
    return fail(tls_problem);

  if (const auto it = url.query.find("layout"); it != url.query.end()) {
    if (it->second == "subdirs")
      config.layout = Layout::kSubdirs;
    else if (it->second == "flat")
      config.layout = Layout::kFlat;
    else if (it->second == "bazel")
      config.layout = Layout::kBazel;
    else
      return fail("layout='" + it->second + "' is not subdirs, flat or bazel");
  }

  const auto token = url.query.find("bearer-token");
  const auto token_file = url.query.find("bearer-token-file");
  if (token != url.query.end() && token_file != url.query.end())
    return fail("bearer-token and bearer-token-file are alternatives");
  std::string bearer;
  if (token != url.query.end()) {
    bearer = token->second;
    if (bearer.empty()) return fail("bearer-token needs a value");
  } else if (token_file != url.query.end()) {
    if (token_file->second.empty() || token_file->second.front() != '/')
      return fail("bearer-token-file must be an absolute path");
    std::string why;
    const auto read = read_token(token_file->second, &why);
    if (!read) return fail(why);
    bearer = *read;
  }
  if (!header_safe(bearer)) return fail("the bearer token holds a line break");
  const bool basic = !url.user.empty() || !url.password.empty();
  if (basic && !bearer.empty()) return fail("both a user and password and a bearer token; give one");
  if (basic) {
    if (url.user.find(':') != std::string::npos) return fail("a user name cannot hold ':'");
    config.authorization = "Basic " + base64(url.user + ":" + url.password);
  } else if (!bearer.empty()) {
    config.authorization = "Bearer " + bearer;
  }
  return config;
}

std::string entry_target(const HttpConfig& config, std::string_view prefix, std::string_view key) {
  std::string out = config.base_path;
  switch (config.layout) {
    case Layout::kSubdirs: {
      const std::string d = digest(key);
      out.append("/").append(prefix).append("/").append(d, 0, 2).append("/").append(d, 2);
      break;
    }
    case Layout::kFlat:
      out.append("/").append(prefix).append("/").append(digest(key));
      break;
    case Layout::kBazel: {
      std::string domain(prefix);
      domain.push_back('\0');
      domain.append(key);
      out.append("/ac/").append(digest(domain));
      break;
    }
  }
  return out;
}

}  // namespace nvrtc_cache::store::remote::http
