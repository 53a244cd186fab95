// Tier URLs: parse_tier_url, TierUrl::display, tier_options, make_tier (store/remote/tier.h).
// Every message names the URL through shown_url (its password and bearer token replaced by "***").
#include <charconv>
#include <cstdlib>

#include "store/remote/http/http_config.h"
#include "store/remote/net/tls_settings.h"
#include "store/remote/percent_encoding.h"
#include "store/remote/redis/redis_config.h"
#include "store/remote/shown_url.h"
#include "store/remote/tier.h"
#include "store/remote/url_user_information.h"

namespace nvrtc_cache::store::remote {
namespace {

constexpr std::string_view kSeparator = "://";

bool parse_number(std::string_view text, std::uint64_t max, std::uint64_t& out) {
  if (text.empty()) return false;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value > max) return false;
  out = value;
  return true;
}

// "4096", "64K", "64M", "1G" (binary units).
bool parse_bytes(std::string_view text, std::uint64_t& out) {
  std::uint64_t scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k':
      case 'K':
        scale = 1ull << 10;
        break;
      case 'm':
      case 'M':
        scale = 1ull << 20;
        break;
      case 'g':
      case 'G':
        scale = 1ull << 30;
        break;
      default:
        break;
    }
    if (scale != 1) text.remove_suffix(1);
  }
  std::uint64_t value = 0;
  if (!parse_number(text, (1ull << 40) / scale, value) || value == 0) return false;
  out = value * scale;
  return true;
}

bool parse_query(std::string_view query, TierUrl& url, std::string* problem, const std::string& shown) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    const auto name = percent_decode(item.substr(0, eq));
    const auto value =
        eq == std::string_view::npos ? std::optional<std::string>("") : percent_decode(item.substr(eq + 1));
    if (!name || !value || name->empty()) {
      if (problem) *problem = "malformed attribute in the shared tier URL " + shown;
      return false;
    }
    url.query[*name] = *value;
  }
  return true;
}

bool is_redis(const TierUrl& url) { return redis::is_redis_scheme(url.scheme); }
bool is_http(const TierUrl& url) { return http::is_http_scheme(url.scheme); }

}  // namespace

// The URL as parse_tier_url reads it back (its password in it, percent-encoded where the way the
// text splits needs it), shown through shown_url.
std::string TierUrl::display() const {
  std::string out = scheme + "://";
  if (!user.empty() || !password.empty()) {
    out += percent_encode(user, "!$&'()*+,;=");
    out += ':';
    out += percent_encode(password, ":!$&'()*+,;=");
    out += '@';
  }
  out += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != 0) {
    out += ':';
    out += std::to_string(port);
  }
  out += percent_encode(path, "/:!$&'()*+,;=[]%");  // only what would split the text differently
  char separator = '?';
  for (const auto& [name, value] : query) {
    out += separator;
    out += percent_encode(name, "/:!$'()*+,;[]");
    if (!value.empty()) {
      out += '=';
      out += percent_encode(value, "/:!$'()*+,;=[]?");
    }
    separator = '&';
  }
  return shown_url(out);
}

std::optional<TierUrl> parse_tier_url(std::string_view text, std::string* problem) {
  const std::string shown = shown_url(text);
  auto fail = [&](const std::string& why) -> std::optional<TierUrl> {
    if (problem) *problem = "the shared tier URL " + shown + " " + why;
    return std::nullopt;
  };
  TierUrl url;
  const std::size_t separator = text.find(kSeparator);
  if (separator == std::string_view::npos) return fail("is not scheme://...");
  url.scheme = lowercase_scheme(text.substr(0, separator));
  std::string_view rest = text.substr(separator + kSeparator.size());
  // User information first: [[user:]password@], up to the last '@' (url_user_information.h).
  if (const std::size_t at = user_information_end(url.scheme, rest); at != std::string_view::npos) {
    if (url.scheme == "file") return fail("has user information; a shared directory has none");
    const std::string_view userinfo = rest.substr(0, at);
    if (ambiguous_user_information(userinfo)) {
      return fail(
          "is ambiguous: an '@' after a '/', '?' or '#' ends the user information, and what comes before "
          "could be a host; percent-encode an '@' of a path or attribute as %40, and a '/', '?' or '#' of a "
          "password as %2F, %3F, %23");
    }
    rest = rest.substr(at + 1);
    const std::size_t colon = userinfo.find(':');
    const auto user = percent_decode(colon == std::string_view::npos ? std::string_view() : userinfo.substr(0, colon));
    const auto password = percent_decode(colon == std::string_view::npos ? userinfo : userinfo.substr(colon + 1));
    if (!user || !password) return fail("has a malformed user or password (percent-encoding)");
    url.user = *user;
    url.password = *password;
  }
  const std::size_t question = rest.find('?');
  if (question != std::string_view::npos) {
    if (!parse_query(rest.substr(question + 1), url, problem, shown)) return std::nullopt;
    rest = rest.substr(0, question);
  }
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  const std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);

  if (url.scheme == "file" || url.scheme == "redis+unix") {
    if (!authority.empty() && authority != "localhost") {
      return fail("names a host (" + std::string(authority) + "); write " + url.scheme + ":///absolute/path");
    }
    const auto decoded = percent_decode(path);
    if (!decoded || decoded->empty() || (*decoded)[0] != '/') return fail("needs an absolute path (file:///dir)");
    url.path = *decoded;
    while (url.path.size() > 1 && url.path.back() == '/') url.path.pop_back();
    if (url.scheme == "redis+unix" && url.query.contains("db")) {
      std::uint64_t db = 0;
      if (!parse_number(url.query["db"], 1u << 20, db)) return fail("has a database that is not a number");
    }
    return url;
  }
  if (!is_redis(url) && !is_http(url)) {
    return fail(
        "has an unknown scheme (redis://, rediss://, redis+unix://, redis+cluster://, rediss+cluster://, "
        "http://, https://, file://)");
  }

  // host[:port] or [ipv6][:port]
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return fail("has an unterminated [IPv6] host");
    url.host = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail("has garbage after the [IPv6] host");
      port_text = after.substr(1);
      if (port_text.empty()) return fail("has an empty port");
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return fail("has an empty port");
    }
  }
  if (url.host.empty()) return fail("has no host");
  if (!port_text.empty()) {
    std::uint64_t port = 0;
    if (!parse_number(port_text, 65535, port) || port == 0) return fail("has a port that is not 1-65535");
    url.port = static_cast<std::uint16_t>(port);
  }
  if (is_http(url)) {  // the base path, as written (http_config checks its characters)
    url.path = std::string(path);
    return url;
  }
  // redis://host/N: the database goes to the "db" attribute, where redis+unix URLs have it too.
  std::string_view db = path;
  while (!db.empty() && db.front() == '/') db.remove_prefix(1);
  if (!db.empty()) {
    std::uint64_t number = 0;
    if (!parse_number(db, 1u << 20, number)) return fail("has a database that is not a number");
    if (url.query.contains("db")) return fail("names the database twice");
    url.query["db"] = std::to_string(number);
  } else if (url.query.contains("db")) {
    std::uint64_t number = 0;
    if (!parse_number(url.query["db"], 1u << 20, number)) return fail("has a database that is not a number");
  }
  return url;
}

TierOptions tier_options(const TierUrl& url, std::string* problem) {
  TierOptions options;
  auto complain = [&](const std::string& what) {
    if (!problem) return;
    if (!problem->empty()) *problem += "; ";
    *problem += what + " in the shared tier URL " + url.display();
  };
  for (const auto& [name, value] : url.query) {
    std::uint64_t number = 0;
    if (name == "read-only") {
      if (value.empty() || value == "1" || value == "true" || value == "yes")
        options.read_only = true;
      else if (value == "0" || value == "false" || value == "no")
        options.read_only = false;
      else
        complain("read-only='" + value + "' is not a flag");
    } else if (name == "connect-timeout") {
      if (parse_number(value, 600'000, number) && number > 0)
        options.connect_timeout = std::chrono::milliseconds(number);
      else
        complain("connect-timeout='" + value + "' is not 1-600000 ms");
    } else if (name == "timeout") {
      if (parse_number(value, 600'000, number) && number > 0)
        options.timeout = std::chrono::milliseconds(number);
      else
        complain("timeout='" + value + "' is not 1-600000 ms");
    } else if (name == "prefix") {
      const bool valid = !value.empty() && value.size() <= 64 && value != "." && value != ".." &&
                         value.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                             std::string::npos;
      if (valid)
        options.prefix = value;
      else
        complain("prefix='" + value + "' is not 1-64 of [A-Za-z0-9._-]");
    } else if (name == "ttl") {
      if (parse_number(value, 10ull * 365 * 86400, number))
        options.ttl = std::chrono::seconds(number);
      else
        complain("ttl='" + value + "' is not a number of seconds");
    } else if (name == "max-entry-size") {
      if (parse_bytes(value, number))
        options.max_entry_size = number;
      else
        complain("max-entry-size='" + value + "' is not a size (4096, 64K, 64M, 1G)");
    } else if (redis::is_redis_attribute(name) && is_redis(url)) {
      // db: checked by parse_tier_url; all used (and checked) by the Redis tier (redis/redis_config.h)
    } else if (http::is_http_attribute(name) && is_http(url)) {
      // used (and checked) by the HTTP tier (http/http_config.h)
    } else {
      complain("unknown attribute '" + name + "'");
    }
  }
  return options;
}

std::unique_ptr<Tier> make_tier(const TierUrl& url, const TierOptions& options, std::string* problem) {
  if (url.scheme == "file") return make_file_tier(url, options, problem);
  if (is_redis(url) && url.scheme.starts_with("rediss") && !net::tls_available()) {
    if (problem) *problem = url.display() + ": TLS (rediss://) is not available in this build; not used";
    return nullptr;
  }
  if (is_redis(url)) return make_redis_tier(url, options, problem);
  if (is_http(url)) return make_http_tier(url, options, problem);
  if (problem) *problem = "no tier for the scheme of " + url.display();
  return nullptr;
}

}  // namespace nvrtc_cache::store::remote
