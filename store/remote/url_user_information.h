// Where a tier URL's user information ([USER:]PASSWORD@) is: the one rule parse_tier_url
// (store/remote/tier.h) splits a URL by and shown_url (store/remote/shown_url.h) masks by, so a
// password is masked wherever the parser found it.
// The rule (docs/remote.md, "Passwords in URLs"): in a URL with a host (redis://, rediss://,
// redis+unix://, redis+cluster://, rediss+cluster://, http://, https:// and any scheme not known),
// the user information runs from "://" to the URL's last '@'; a password may hold '/', '?', '#'
// and '@' as written (base64 and random passwords do), and an '@' after the host (an HTTP path, a
// file named by an attribute) is written %40. A file:// URL has no user information: only an '@'
// before its path counts (and is refused by the parser).
// Contract: pure functions of their arguments; thread-safe; never throw except std::bad_alloc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nvrtc_cache::store::remote {

// `scheme` in lower case ("HTTPS" -> "https").
std::string lowercase_scheme(std::string_view scheme);

// The offset in `remainder` (the URL after "scheme://") of the '@' that ends the user information,
// or npos when there is none. `scheme` is compared without regard to case.
std::size_t user_information_end(std::string_view scheme, std::string_view remainder);

// Whether the user information `userinfo` (before its last '@') is ambiguous: it holds a '/', '?'
// or '#' as written and what precedes that character (after an '@' there, if any) would be a
// host[:port] by itself ("h/team" of "http://h/team@site", "cache:8080/x" of
// "http://cache:8080/x@site", "u:p@h/x" of "http://u:p@h/x@y"), so an '@' in a path or attribute
// cannot be told from one ending a password. The parser refuses such a URL.
bool ambiguous_user_information(std::string_view userinfo);

}  // namespace nvrtc_cache::store::remote
