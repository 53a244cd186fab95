// Percent-encoding (RFC 3986, section 2.1) of the parts of a tier URL: parse_tier_url decodes user,
// password, paths and attributes; TierUrl::display and shown_url (store/remote/shown_url.h) encode
// what would otherwise change how the shown text splits.
// Contract: pure functions of their arguments; thread-safe; never throw except std::bad_alloc.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nvrtc_cache::store::remote {

// "%41" -> "A"; nullopt for a '%' not followed by two hex digits, or an encoded NUL.
std::optional<std::string> percent_decode(std::string_view text);

// `text` with every byte that is not an ASCII letter or digit, not in "-._~" and not in `keep`
// written as %XX (upper-case hex).
std::string percent_encode(std::string_view text, std::string_view keep);

}  // namespace nvrtc_cache::store::remote
