#include "store/remote/url_user_information.h"

namespace nvrtc_cache::store::remote {
namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// Whether `text` could be a URL's host[:port] by itself: a name or [IPv6] literal, then an optional
// numeric port.
bool host_and_port(std::string_view text) {
  if (text.empty() || text.find('@') != std::string_view::npos) return false;
  if (text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    const std::string_view after = text.substr(close + 1);
    return after.empty() || (after.front() == ':' && all_digits(after.substr(1)));
  }
  const std::size_t colon = text.find(':');
  if (colon == 0) return false;
  return colon == std::string_view::npos || all_digits(text.substr(colon + 1));
}

}  // namespace

std::string lowercase_scheme(std::string_view scheme) {
  std::string out(scheme);
  for (auto& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::size_t user_information_end(std::string_view scheme, std::string_view remainder) {
  if (lowercase_scheme(scheme) == "file") return remainder.substr(0, remainder.find_first_of("/?#")).rfind('@');
  return remainder.rfind('@');
}

bool ambiguous_user_information(std::string_view userinfo) {
  const std::size_t special = userinfo.find_first_of("/?#");
  if (special == std::string_view::npos) return false;
  std::string_view before = userinfo.substr(0, special);  // "u:p@h" of "u:p@h/x": a host "h" after an '@'
  if (const std::size_t at = before.rfind('@'); at != std::string_view::npos) before.remove_prefix(at + 1);
  return host_and_port(before);
}

}  // namespace nvrtc_cache::store::remote
