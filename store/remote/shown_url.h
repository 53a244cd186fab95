// Shown URLs: the one rendering of a tier URL for people. Logs, the shim's warnings,
// `nvrtc-cache config`, `doctor`, `remote check` (and their JSON), a tier's display_name() and every
// message about a URL show it through shown_url, whether it parsed or not.
// What is masked: the password of the user information, found by the parser's own rule
// (store/remote/url_user_information.h), so a password holding '/', '?', '#', '@' or
// percent-encoding is masked whole ("redis://alice:***@host", "redis://:***@host", "***@host"
// when there is no scheme); and the value of every bearer-token attribute. The user name, the host,
// the path and other attributes are shown as written.
// Contract: pure functions of their arguments; thread-safe; never throw except std::bad_alloc.
#pragma once

#include <string>
#include <string_view>

namespace nvrtc_cache::store::remote {

// One URL (or text that was meant to be one) as people may see it.
std::string shown_url(std::string_view text);

// A white-space separated list of URLs (NVRTC_CACHE_REMOTE), each through shown_url, the white
// space kept.
std::string shown_urls(std::string_view list);

}  // namespace nvrtc_cache::store::remote
