// What a TLS tier (rediss://, https://) is configured with, and whether this build has TLS at all:
// the Linux build does (store/remote/net/tls_session.h, OpenSSL loaded at the first TLS
// connection; stream_tls.cc), the Windows build does not (tls_absent.cc: every TLS URL is refused
// when the tiers are opened, store/remote/tier_url.cc). Code that only carries the settings or asks
// for a context includes this header, never OpenSSL's.
// Contract: thread-safe; never throws (allocation failure aside); messages hold no secret.
#pragma once

#include <memory>
#include <string>

namespace nvrtc_cache::store::remote::net {

class TlsContext;

struct TlsSettings {
  std::string ca_file;      // tls-ca-file: PEM CA certificates to trust (else the system's)
  std::string ca_dir;       // tls-ca-dir: a hashed CA directory (c_rehash)
  std::string cert_file;    // tls-cert-file: client certificate chain (PEM), for tls-auth-clients
  std::string key_file;     // tls-key-file: its private key (PEM, unencrypted)
  std::string server_name;  // tls-server-name: the name to verify and send (SNI); else the host
};

// Whether this build can make TLS connections.
bool tls_available();

// TlsContext::create (loads the library and the files); nullptr with *problem set (naming the
// setting) on failure, or where the build has no TLS.
std::shared_ptr<const TlsContext> make_tls_context(const TlsSettings& settings, std::string* problem);

}  // namespace nvrtc_cache::store::remote::net
