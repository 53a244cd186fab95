// The tls-* attributes of a shared tier's URL (rediss://, rediss+cluster://, https://): which they
// are, and their values read into TlsSettings (store/remote/net/tls_session.h), checked.
// Contract: pure functions of their arguments (the files named are not opened here: TlsContext
// does that); thread-safe; never throw (allocation failure aside).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "store/remote/net/tls_settings.h"

namespace nvrtc_cache::store::remote::net {

// tls-ca-file, tls-ca-dir, tls-cert-file, tls-key-file, tls-server-name.
bool is_tls_attribute(std::string_view name);

// Reads the tls-* attributes of `query` into *settings: "" when they are sound, else the problem
// ("tls-ca-file needs an https:// URL" when `tls` is false, `tls_url` naming the URLs that take
// them; a path that is not absolute; a value missing; a certificate without its key).
std::string read_tls_attributes(const std::map<std::string, std::string, std::less<>>& query, bool tls,
                                std::string_view tls_url, TlsSettings* settings);

}  // namespace nvrtc_cache::store::remote::net
