// TlsLibrary: the OpenSSL functions the TLS tiers (rediss://, https://) use, as a table loaded at first use.
// Nothing TLS-related is loaded or initialised in a process that configures no TLS tier: the
// shim does not link OpenSSL (no DT_NEEDED entry, no symbol of it in the shim's tables); the first
// TLS connection dlopen()s the distribution's libssl.so.3 (which brings libcrypto.so.3) with
// RTLD_LOCAL | RTLD_NODELETE and looks the functions up in it. A host that has loaded the same
// libssl.so.3 itself (Python's `ssl`, an application) shares that one copy, which OpenSSL 3 supports
// (its initialisation is idempotent and thread-safe; each user keeps its own SSL_CTX); a host with
// a different OpenSSL (another soname) keeps its own, since nothing of ours is in the global scope.
// Initialisation passes OPENSSL_INIT_NO_ATEXIT, so loading it here registers no exit handler. A host
// that initialised the same OpenSSL itself may have: its OPENSSL_cleanup() then runs at exit, in
// whatever order against the shim's own exit flush. So every use of OpenSSL here holds a TlsUse, and
// a handler registered with OPENSSL_atexit (run at the start of OPENSSL_cleanup) closes the gate and
// waits (at most 1 s) for the uses in flight: after it, TLS connections fail (fail open) instead of
// touching a library being torn down, and nothing of OpenSSL's is freed any more.
// Why dlopen rather than linking libssl.a (hidden): two OpenSSL copies in one process, 5 MB more in
// every host, and a static copy's initialisation would run whether or not TLS is used. Why not
// libhiredis-ssl: the tier does not use hiredis (store/remote/redis/resp_connection.h says why).
// Contract: thread-safe; loaded once and never unloaded; tls_library() returns nullptr (and `error`
// says why) when libssl.so.3 cannot be loaded, and a TLS tier then fails open. fork: the table is
// published lock-free (platform::publish_once), so a child never inherits a half-done load.
#pragma once

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <chrono>
#include <string>

namespace nvrtc_cache::store::remote::net {

#define NVRTC_CACHE_TLS_FUNCTIONS(X)                                                                             \
  X(OPENSSL_init_ssl)                                                                                            \
  X(OPENSSL_atexit)                                                                                              \
  X(TLS_client_method)                                                                                           \
  X(SSL_CTX_new) X(SSL_CTX_free) X(SSL_CTX_set_verify) X(SSL_CTX_load_verify_locations)                          \
      X(SSL_CTX_set_default_verify_paths) X(SSL_CTX_use_certificate_chain_file) X(SSL_CTX_use_PrivateKey_file)   \
          X(SSL_CTX_check_private_key) X(SSL_CTX_ctrl) X(SSL_new) X(SSL_free) X(SSL_set_bio) X(SSL_ctrl)         \
              X(SSL_set1_host) X(SSL_get0_param) X(SSL_connect) X(SSL_read) X(SSL_write) X(SSL_peek)             \
                  X(SSL_get_verify_result) X(SSL_get_shutdown) X(ERR_set_mark) X(ERR_pop_to_mark)                \
                      X(ERR_peek_last_error) X(ERR_error_string_n) X(X509_verify_cert_error_string)              \
                          X(X509_VERIFY_PARAM_set1_ip_asc) X(BIO_get_new_index) X(BIO_meth_new) X(BIO_meth_free) \
                              X(BIO_meth_set_write) X(BIO_meth_set_read) X(BIO_meth_set_ctrl) X(BIO_new)         \
                                  X(BIO_set_data) X(BIO_get_data) X(BIO_set_init) X(BIO_set_flags) X(BIO_clear_flags)

struct TlsLibrary {
#define NVRTC_CACHE_TLS_MEMBER(name) decltype(&::name) name = nullptr;
  NVRTC_CACHE_TLS_FUNCTIONS(NVRTC_CACHE_TLS_MEMBER)
#undef NVRTC_CACHE_TLS_MEMBER
  // A socket BIO of the tier's own: reads with recv(MSG_DONTWAIT), writes with
  // send(MSG_NOSIGNAL | MSG_DONTWAIT) (OpenSSL's socket BIO writes with write(2), which raises
  // SIGPIPE in the host when the server has closed the connection). Its data is a SocketBio.
  BIO_METHOD* socket_method = nullptr;
};

// What the socket BIO saw last: which readiness OpenSSL must wait for, or the errno that ended it.
// Past `deadline` the BIO reads and writes nothing and answers "would block", so one OpenSSL call
// (a handshake step, a read that skips records carrying no data) ends there however fast the
// server sends; the caller's wait then finds the deadline passed.
struct SocketBio {
  int fd = -1;
  short want = 0;  // POLLIN / POLLOUT after a would-block
  int error = 0;   // errno of a failed recv/send; ECONNRESET for an orderly close mid-record
  bool eof = false;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// The loaded, initialised library; nullptr (with *error set) when it cannot be loaded.
const TlsLibrary* tls_library(std::string* error = nullptr);

// One use of OpenSSL: ok() is false once OpenSSL's cleanup has begun (do not call it then).
class TlsUse {
 public:
  TlsUse();
  ~TlsUse();
  TlsUse(const TlsUse&) = delete;
  TlsUse& operator=(const TlsUse&) = delete;
  bool ok() const { return ok_; }

 private:
  bool ok_;
};

// True once tls_library() has been called in this process (for the tests: a process with no TLS
// tier never loads it).
bool tls_library_requested();

}  // namespace nvrtc_cache::store::remote::net
