// HttpConfig: what an http:// or https:// tier URL asks for — the server, the base path, the
// credentials, the layout of entries — and where each entry lives on the server.
//
// URL forms (port 80 / 443 unless given):
//   http://[USER:PASSWORD@]HOST[:PORT][/PATH][?layout=subdirs|flat|bazel&...]
//   https://...                     (the same over TLS; tls-* attributes as rediss://)
// Attributes: layout (below), bearer-token=TOKEN or bearer-token-file=PATH (sent as
// "Authorization: Bearer"; not with a user and password), tls-ca-file, tls-ca-dir, tls-cert-file,
// tls-key-file, tls-server-name (https:// only; store/remote/net/tls_session.h). The password and
// the token are never shown (TierUrl::display replaces them by "***").
// Layouts, as ccache's HTTP storage names them (D = 64 lowercase hex digits, the BLAKE2b-256 of
// the local key; the sealed value echoes the full key, so a collision is a miss, never a wrong
// value):
//   subdirs (default)  PATH/<prefix>/D[0..2)/D[2..64)   like ccache's: 256 directories
//   flat               PATH/<prefix>/D
//   bazel              PATH/ac/D', D' = BLAKE2b-256 of the prefix and the key (the prefix still
//                      separates caches), for bazel-remote's action cache (its validation off)
// Contract: pure functions, thread-safe; bearer-token-file is read when the config is made.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/remote/net/tls_settings.h"
#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote::http {

enum class Layout { kSubdirs, kFlat, kBazel };

struct HttpConfig {
  bool tls = false;
  std::string host;
  std::uint16_t port = 80;
  std::string base_path;      // "" or "/some/path" (no trailing slash), percent-encoded as written
  std::string authorization;  // the Authorization header's value ("Basic ...", "Bearer ..."), or empty
  Layout layout = Layout::kSubdirs;
  net::TlsSettings tls_settings;
};

// True for http and https.
bool is_http_scheme(std::string_view scheme);
// True for the attributes only HTTP tiers take (layout, bearer-token, bearer-token-file, tls-*).
bool is_http_attribute(std::string_view name);

// The tier URL's HTTP-specific parts; nullopt with *problem set when they are malformed.
std::optional<HttpConfig> http_config(const TierUrl& url, std::string* problem);

// The request target (path) of `key`'s entry: base path, then the layout's name for it.
std::string entry_target(const HttpConfig& config, std::string_view prefix, std::string_view key);

// "user:password" as RFC 7617 sends it (base64).
std::string base64(std::string_view bytes);

}  // namespace nvrtc_cache::store::remote::http
