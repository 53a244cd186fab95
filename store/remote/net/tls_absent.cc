// The build without TLS (Windows): no TLS context is ever made, so no stream ever starts TLS; the
// tiers refuse rediss:// and https:// URLs when they are opened (store/remote/tier_url.cc).
#include "store/remote/net/stream.h"
#include "store/remote/net/tls_settings.h"

namespace nvrtc_cache::store::remote::net {

bool tls_available() { return false; }

std::shared_ptr<const TlsContext> make_tls_context(const TlsSettings&, std::string* problem) {
  if (problem) *problem = "TLS is not available in this build";
  return nullptr;
}

void TlsSessionDeleter::operator()(TlsSession*) const {}  // none is ever made

IoResult Stream::start_tls(std::shared_ptr<const TlsContext>, const std::string&, Deadline) {
  return io_failure(IoCode::kError, "TLS is not available in this build");
}

Stream::TlsStep Stream::tls_read(char*, std::size_t, std::size_t*, short*, IoResult* failure) {
  *failure = io_failure(IoCode::kError, "TLS is not available in this build");
  return TlsStep::kFailed;
}

Stream::TlsStep Stream::tls_write(const char*, std::size_t, std::size_t*, short*, IoResult* failure) {
  *failure = io_failure(IoCode::kError, "TLS is not available in this build");
  return TlsStep::kFailed;
}

bool Stream::tls_readable_means_stale() const { return true; }

void Stream::tls_set_deadline(Deadline) {}

}  // namespace nvrtc_cache::store::remote::net
