#include "store/remote/shown_url.h"

#include <algorithm>
#include <optional>

#include "store/remote/percent_encoding.h"
#include "store/remote/url_user_information.h"

namespace nvrtc_cache::store::remote {
namespace {

constexpr std::string_view kSchemeSeparator = "://";
constexpr std::string_view kMasked = "***";

// Attributes whose value is a secret.
bool secret_attribute(std::string_view name) {
  const std::optional<std::string> decoded = percent_decode(name);
  return (decoded ? std::string_view(*decoded) : name) == "bearer-token";
}

// The part of a URL after its user information, with every secret attribute's value masked.
std::string with_attributes_masked(std::string_view rest) {
  const std::size_t question = rest.find('?');
  std::string out(rest.substr(0, question));
  if (question == std::string_view::npos) return out;
  std::string_view query = rest.substr(question + 1);
  out += '?';
  while (true) {
    const std::size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    const std::size_t eq = item.find('=');
    if (eq != std::string_view::npos && secret_attribute(item.substr(0, eq))) {
      out += item.substr(0, eq + 1);
      out += kMasked;
    } else {
      out += item;
    }
    if (amp == std::string_view::npos) break;
    out += '&';
    query = query.substr(amp + 1);
  }
  return out;
}

// `text` with the value of every "bearer-token=" masked wherever it is, up to the next '&': a token
// holding an '@' as written would otherwise be taken for the end of user information.
std::string with_tokens_masked(std::string_view text) {
  constexpr std::string_view kToken = "bearer-token=";
  std::string out(text);
  for (std::size_t at = out.find(kToken); at != std::string::npos; at = out.find(kToken, at + 1)) {
    const std::size_t begin = at + kToken.size();
    const std::size_t end = std::min(out.find('&', begin), out.size());
    out.replace(begin, end - begin, kMasked);
  }
  return out;
}

}  // namespace

std::string shown_url(std::string_view written) {
  const std::string masked = with_tokens_masked(written);
  const std::string_view text = masked;
  const std::size_t separator = text.find(kSchemeSeparator);
  if (separator == std::string_view::npos) {
    // Not a URL; anything before an '@' could be a secret.
    const std::size_t at = text.rfind('@');
    if (at == std::string_view::npos) return with_attributes_masked(text);
    return std::string(kMasked) + with_attributes_masked(text.substr(at));
  }
  const std::size_t authority = separator + kSchemeSeparator.size();
  std::string out(text.substr(0, authority));
  std::string_view rest = text.substr(authority);
  if (const std::size_t at = user_information_end(text.substr(0, separator), rest); at != std::string_view::npos) {
    const std::string_view userinfo = rest.substr(0, at);
    const std::size_t colon = userinfo.find(':');
    if (colon != std::string_view::npos) out += userinfo.substr(0, colon + 1);
    out += kMasked;
    rest = rest.substr(at);
  }
  return out + with_attributes_masked(rest);
}

std::string shown_urls(std::string_view list) {
  constexpr std::string_view kSpace = " \t\n\r\v\f";
  std::string out;
  std::size_t pos = 0;
  while (pos < list.size()) {
    const std::size_t start = std::min(list.find_first_not_of(kSpace, pos), list.size());
    out += list.substr(pos, start - pos);
    if (start == list.size()) break;
    const std::size_t end = std::min(list.find_first_of(kSpace, start), list.size());
    out += shown_url(list.substr(start, end - start));
    pos = end;
  }
  return out;
}

}  // namespace nvrtc_cache::store::remote
