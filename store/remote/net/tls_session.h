// TLS for the shared tiers (rediss://, https://): TlsContext holds what every connection of a tier shares (the
// trust store, the client certificate), TlsSession one connection's TLS state over a non-blocking
// socket the caller owns. OpenSSL comes from store/remote/net/tls_library.h (loaded at the first
// TLS connection, never before). Verification is always on: the server's certificate must chain
// to tls-ca-file / tls-ca-dir (else the system's trust store) and name the server (tls-server-name,
// else the URL's host; an IP address is matched against the certificate's IP addresses). TLS 1.2
// is the minimum.
// The socket is read and written through the tier's own BIO (recv/send with MSG_DONTWAIT, sends
// with MSG_NOSIGNAL: no SIGPIPE in the host); every wait is the caller's poll() against its
// deadline, so a handshake is bounded like any exchange. OpenSSL's per-thread error queue is left
// as the host had it: each call sets a mark and pops back to it (a host that uses the same
// libssl.so.3 on the same thread never sees our errors).
// Contract: TlsContext is immutable once made and thread-safe; a TlsSession is used by one thread
// at a time. fork: a child may destroy its copy of a session (SSL_free sends nothing) but must not
// use it. Never throws (allocation failure aside); messages hold no secret (no key material).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "store/remote/net/tls_library.h"
#include "store/remote/net/tls_settings.h"

namespace nvrtc_cache::store::remote::net {

class TlsContext {
 public:
  // Loads the library and the files; nullptr with *problem set (naming the setting) on failure.
  static std::shared_ptr<const TlsContext> create(const TlsSettings& settings, std::string* problem);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  const TlsLibrary& library() const { return *library_; }
  SSL_CTX* get() const { return context_; }
  const TlsSettings& settings() const { return settings_; }

 private:
  TlsContext(const TlsLibrary* library, SSL_CTX* context, TlsSettings settings)
      : library_(library), context_(context), settings_(std::move(settings)) {}
  const TlsLibrary* library_;
  SSL_CTX* context_;
  TlsSettings settings_;
};

// What one TLS read or write came to.
enum class TlsIo { kDone, kWantRead, kWantWrite, kClosed, kError };

class TlsSession {
 public:
  // A client session on `fd` (connected, non-blocking) for `host` (the URL's; tls-server-name wins).
  // nullptr with *problem set when OpenSSL refuses.
  static std::unique_ptr<TlsSession> create(std::shared_ptr<const TlsContext> context, int fd, const std::string& host,
                                            std::string* problem);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // One step of the handshake: kDone, kWantRead/kWantWrite (poll, then call again), or kError with
  // *detail saying why in plain words (certificate problems name the check that failed).
  TlsIo handshake(std::string* detail);
  // Like recv()/send() on a non-blocking socket: kDone with *count >= 1 byte, a want, kClosed (the
  // server closed the connection) or kError with *detail. A write that wanted must be repeated
  // with the same bytes.
  TlsIo read(char* buffer, std::size_t length, std::size_t* count, std::string* detail);
  TlsIo write(const char* data, std::size_t length, std::size_t* count, std::string* detail);
  // For an idle connection whose socket is readable: true when the server sent application data
  // or closed it (the connection is stale); false when it sent only TLS records such as session
  // tickets (consumed here).
  bool readable_means_stale();
  // The deadline handshake(), read() and write() stop reading and writing at, within one OpenSSL
  // call too (they then answer a want, and the caller's wait times out).
  void set_deadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline; }

 private:
  TlsSession(std::shared_ptr<const TlsContext> context, SSL* ssl) : context_(std::move(context)), ssl_(ssl) {}
  TlsIo outcome(int rc, const char* what, std::string* detail);
  // A failure before any reply was read, without a client certificate, says what is likely.
  TlsIo after_handshake(TlsIo io, std::string* detail) const;

  std::shared_ptr<const TlsContext> context_;
  SSL* ssl_;
  SocketBio bio_;
  bool received_ = false;  // any application data read yet
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace nvrtc_cache::store::remote::net
