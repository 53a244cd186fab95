#include "store/remote/net/tls_session.h"

#include <arpa/inet.h>
#include <poll.h>

#include <cstring>

namespace nvrtc_cache::store::remote::net {
namespace {

// Restores the thread's OpenSSL error queue to what the host left there.
class ErrorMark {
 public:
  explicit ErrorMark(const TlsLibrary& ssl) : ssl_(ssl) { ssl_.ERR_set_mark(); }
  ~ErrorMark() { ssl_.ERR_pop_to_mark(); }
  ErrorMark(const ErrorMark&) = delete;
  ErrorMark& operator=(const ErrorMark&) = delete;

 private:
  const TlsLibrary& ssl_;
};

// The newest OpenSSL error in words ("error:0A00010B:SSL routines::wrong version number").
std::string last_error(const TlsLibrary& ssl) {
  const unsigned long code = ssl.ERR_peek_last_error();
  if (code == 0) return "unknown error";
  char text[256];
  ssl.ERR_error_string_n(code, text, sizeof text);
  return text;
}

constexpr const char* kClosed = "OpenSSL has been shut down (the process is exiting)";

bool is_ip_address(const std::string& name) {
  in6_addr address;
  return inet_pton(AF_INET, name.c_str(), &address) == 1 || inet_pton(AF_INET6, name.c_str(), &address) == 1;
}

}  // namespace

std::shared_ptr<const TlsContext> TlsContext::create(const TlsSettings& settings, std::string* problem) {
  std::string load_error;
  const TlsLibrary* ssl = tls_library(&load_error);
  if (ssl == nullptr) {
    *problem = load_error;
    return nullptr;
  }
  const TlsUse use;
  if (!use.ok()) {
    *problem = kClosed;
    return nullptr;
  }
  const ErrorMark mark(*ssl);
  SSL_CTX* context = ssl->SSL_CTX_new(ssl->TLS_client_method());
  if (context == nullptr) {
    *problem = "OpenSSL cannot make a TLS context: " + last_error(*ssl);
    return nullptr;
  }
  std::shared_ptr<const TlsContext> made(new TlsContext(ssl, context, settings));
  auto fail = [&](const std::string& why) -> std::shared_ptr<const TlsContext> {
    *problem = why + " (" + last_error(*ssl) + ")";
    return nullptr;
  };
  ssl->SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, nullptr);
  ssl->SSL_CTX_ctrl(context, SSL_CTRL_MODE, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER,
                    nullptr);
  ssl->SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
  if (!settings.ca_file.empty() || !settings.ca_dir.empty()) {
    if (ssl->SSL_CTX_load_verify_locations(context, settings.ca_file.empty() ? nullptr : settings.ca_file.c_str(),
                                           settings.ca_dir.empty() ? nullptr : settings.ca_dir.c_str()) != 1) {
      return fail(!settings.ca_file.empty() ? "tls-ca-file " + settings.ca_file + " holds no usable CA certificate"
                                            : "tls-ca-dir " + settings.ca_dir + " cannot be used");
    }
  } else if (ssl->SSL_CTX_set_default_verify_paths(context) != 1) {
    return fail("the system's trusted CA certificates cannot be loaded");
  }
  if (settings.cert_file.empty() != settings.key_file.empty()) {
    *problem = "tls-cert-file and tls-key-file go together";
    return nullptr;
  }
  if (!settings.cert_file.empty()) {
    if (ssl->SSL_CTX_use_certificate_chain_file(context, settings.cert_file.c_str()) != 1)
      return fail("tls-cert-file " + settings.cert_file + " holds no usable certificate");
    if (ssl->SSL_CTX_use_PrivateKey_file(context, settings.key_file.c_str(), SSL_FILETYPE_PEM) != 1 &&
        last_error(*ssl).find("key values mismatch") == std::string::npos)
      return fail("tls-key-file " + settings.key_file + " holds no usable (unencrypted PEM) private key");
    if (ssl->SSL_CTX_check_private_key(context) != 1)
      return fail("tls-key-file " + settings.key_file + " is not the key of tls-cert-file " + settings.cert_file);
  }
  return made;
}

TlsContext::~TlsContext() {
  const TlsUse use;
  if (context_ != nullptr && use.ok()) library_->SSL_CTX_free(context_);  // else left to the exiting process
}

std::unique_ptr<TlsSession> TlsSession::create(std::shared_ptr<const TlsContext> context, int fd,
                                               const std::string& host, std::string* problem) {
  const TlsLibrary& ssl = context->library();
  const TlsUse use;
  if (!use.ok()) {
    *problem = kClosed;
    return nullptr;
  }
  const ErrorMark mark(ssl);
  SSL* session = ssl.SSL_new(context->get());
  if (session == nullptr) {
    *problem = "OpenSSL cannot make a TLS session: " + last_error(ssl);
    return nullptr;
  }
  std::unique_ptr<TlsSession> made(new TlsSession(context, session));
  made->bio_.fd = fd;
  BIO* bio = ssl.BIO_new(ssl.socket_method);
  if (bio == nullptr) {
    *problem = "OpenSSL cannot make a BIO: " + last_error(ssl);
    return nullptr;
  }
  ssl.BIO_set_data(bio, &made->bio_);
  ssl.BIO_set_init(bio, 1);
  ssl.SSL_set_bio(session, bio, bio);  // the session owns it now
  const std::string& name = context->settings().server_name.empty() ? host : context->settings().server_name;
  bool named;
  if (is_ip_address(name)) {
    named = ssl.X509_VERIFY_PARAM_set1_ip_asc(ssl.SSL_get0_param(session), name.c_str()) == 1;
  } else {
    named = ssl.SSL_set1_host(session, name.c_str()) == 1 &&
            ssl.SSL_ctrl(session, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                         const_cast<char*>(name.c_str())) == 1;
  }
  if (!named) {
    *problem = "cannot use '" + name + "' as the TLS server name";
    return nullptr;
  }
  return made;
}

TlsSession::~TlsSession() {
  const TlsUse use;
  if (!use.ok()) return;  // OpenSSL is being torn down: the exiting process keeps the memory
  const ErrorMark mark(context_->library());
  context_->library().SSL_free(ssl_);  // no SSL_shutdown: a fork child's copy must send nothing
}

TlsIo TlsSession::outcome(int rc, const char* what, std::string* detail) {
  (void)rc;
  const TlsLibrary& ssl = context_->library();
  if (bio_.want != 0 && bio_.error == 0) return bio_.want == POLLIN ? TlsIo::kWantRead : TlsIo::kWantWrite;
  if (bio_.error != 0) {
    *detail = std::string(what) + ": " +
              (bio_.error == EPIPE || bio_.error == ECONNRESET ? std::string("connection closed by the server")
                                                               : std::strerror(bio_.error));
    return TlsIo::kError;
  }
  if ((ssl.SSL_get_shutdown(ssl_) & SSL_RECEIVED_SHUTDOWN) != 0 || bio_.eof) return TlsIo::kClosed;
  *detail = std::string(what) + ": " + last_error(ssl);
  return TlsIo::kError;
}

TlsIo TlsSession::handshake(std::string* detail) {
  const TlsLibrary& ssl = context_->library();
  const TlsUse use;
  if (!use.ok()) return (*detail = kClosed), TlsIo::kError;
  const ErrorMark mark(ssl);
  bio_ = SocketBio{bio_.fd};
  bio_.deadline = deadline_;
  const int rc = ssl.SSL_connect(ssl_);
  if (rc == 1) return TlsIo::kDone;
  const long verified = ssl.SSL_get_verify_result(ssl_);
  if (verified != X509_V_OK) {
    const std::string& name = context_->settings().server_name;
    std::string hint;
    if (verified == X509_V_ERR_HOSTNAME_MISMATCH || verified == X509_V_ERR_IP_ADDRESS_MISMATCH) {
      hint = name.empty() ? " (set tls-server-name to a name the certificate holds)" : "";
    } else if (context_->settings().ca_file.empty() && context_->settings().ca_dir.empty()) {
      hint = " (against the system's CA certificates; set tls-ca-file to the server's CA)";
    } else {
      hint = " (against tls-ca-file/tls-ca-dir)";
    }
    *detail = std::string("TLS certificate verification failed: ") + ssl.X509_verify_cert_error_string(verified) + hint;
    return TlsIo::kError;
  }
  TlsIo io = outcome(rc, "TLS handshake", detail);
  if (io == TlsIo::kClosed) {
    *detail = "TLS handshake: connection closed by the server (not a TLS port, or the server refused us)";
    io = TlsIo::kError;
  } else if (io == TlsIo::kError && detail->find("wrong version number") != std::string::npos) {
    *detail += " (is this a TLS port?)";
  }
  return io;
}

TlsIo TlsSession::read(char* buffer, std::size_t length, std::size_t* count, std::string* detail) {
  const TlsLibrary& ssl = context_->library();
  const TlsUse use;
  if (!use.ok()) return (*detail = kClosed), TlsIo::kError;
  const ErrorMark mark(ssl);
  bio_ = SocketBio{bio_.fd};
  bio_.deadline = deadline_;
  const int chunk = static_cast<int>(std::min<std::size_t>(length, 1 << 30));
  const int rc = ssl.SSL_read(ssl_, buffer, chunk);
  if (rc > 0) {
    *count = static_cast<std::size_t>(rc);
    received_ = true;
    return TlsIo::kDone;
  }
  return after_handshake(outcome(rc, "TLS read", detail), detail);
}

TlsIo TlsSession::write(const char* data, std::size_t length, std::size_t* count, std::string* detail) {
  const TlsLibrary& ssl = context_->library();
  const TlsUse use;
  if (!use.ok()) return (*detail = kClosed), TlsIo::kError;
  const ErrorMark mark(ssl);
  bio_ = SocketBio{bio_.fd};
  bio_.deadline = deadline_;
  const int chunk = static_cast<int>(std::min<std::size_t>(length, 1 << 30));
  const int rc = ssl.SSL_write(ssl_, data, chunk);
  if (rc > 0) {
    *count = static_cast<std::size_t>(rc);
    return TlsIo::kDone;
  }
  return after_handshake(outcome(rc, "TLS write", detail), detail);
}

TlsIo TlsSession::after_handshake(TlsIo io, std::string* detail) const {
  if ((io == TlsIo::kClosed || io == TlsIo::kError) && !received_ && context_->settings().cert_file.empty()) {
    // A server that requires client certificates accepts the handshake (TLS 1.3) and then closes.
    *detail =
        "the server closed the TLS connection right after the handshake (does it require a client "
        "certificate? set tls-cert-file and tls-key-file)";
    return TlsIo::kError;
  }
  return io;
}

bool TlsSession::readable_means_stale() {
  const TlsLibrary& ssl = context_->library();
  const TlsUse use;
  if (!use.ok()) return true;
  const ErrorMark mark(ssl);
  bio_ = SocketBio{bio_.fd};
  char byte;
  const int rc = ssl.SSL_peek(ssl_, &byte, 1);
  if (rc > 0) return true;
  std::string ignored;
  return outcome(rc, "TLS peek", &ignored) != TlsIo::kWantRead;
}

}  // namespace nvrtc_cache::store::remote::net
