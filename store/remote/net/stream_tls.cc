// Stream's TLS steps where the build has TLS (Linux): a TlsSession over the stream's socket
// (store/remote/net/tls_session.h); tls_absent.cc is the build without.

#include "store/remote/net/stream.h"
#include "store/remote/net/tls_session.h"

namespace nvrtc_cache::store::remote::net {

bool tls_available() { return true; }

std::shared_ptr<const TlsContext> make_tls_context(const TlsSettings& settings, std::string* problem) {
  return TlsContext::create(settings, problem);
}

void TlsSessionDeleter::operator()(TlsSession* session) const { delete session; }

IoResult Stream::start_tls(std::shared_ptr<const TlsContext> context, const std::string& host, Deadline deadline) {
  std::string problem;
  tls_.reset(TlsSession::create(std::move(context), static_cast<int>(fd_), host, &problem).release());
  if (tls_ == nullptr) return io_failure(IoCode::kError, problem);
  tls_->set_deadline(deadline);
  for (;;) {
    if (Clock::now() >= deadline)
      return io_failure(IoCode::kTimeout, "TLS handshake timed out (a frozen server, or not a TLS port?)");
    std::string detail;
    const TlsIo io = tls_->handshake(&detail);
    if (io == TlsIo::kDone) return {};
    if (io != TlsIo::kWantRead && io != TlsIo::kWantWrite) return io_failure(IoCode::kError, detail);
    const short wait = io == TlsIo::kWantRead ? platform::kSocketReadable : platform::kSocketWritable;
    if (IoResult waited = wait_for(wait, deadline); !waited.ok()) {
      return waited.code == IoCode::kTimeout
                 ? io_failure(IoCode::kTimeout, "TLS handshake timed out (a frozen server, or not a TLS port?)")
                 : waited;
    }
  }
}

Stream::TlsStep Stream::tls_read(char* buffer, std::size_t length, std::size_t* got, short* wait, IoResult* failure) {
  std::string detail;
  const TlsIo io = tls_->read(buffer, length, got, &detail);
  if (io == TlsIo::kDone || io == TlsIo::kClosed) return TlsStep::kDone;
  if (io == TlsIo::kError) {
    *failure = io_failure(IoCode::kError, detail);
    return TlsStep::kFailed;
  }
  *wait = io == TlsIo::kWantRead ? platform::kSocketReadable : platform::kSocketWritable;
  return TlsStep::kWait;
}

Stream::TlsStep Stream::tls_write(const char* data, std::size_t length, std::size_t* sent, short* wait,
                                  IoResult* failure) {
  std::string detail;
  const TlsIo io = tls_->write(data, length, sent, &detail);
  if (io == TlsIo::kDone) return TlsStep::kDone;
  if (io == TlsIo::kClosed) {
    *failure = io_failure(IoCode::kError, "send: connection closed by the server");
    return TlsStep::kFailed;
  }
  if (io == TlsIo::kError) {
    *failure = io_failure(IoCode::kError, detail);
    return TlsStep::kFailed;
  }
  *wait = io == TlsIo::kWantRead ? platform::kSocketReadable : platform::kSocketWritable;
  return TlsStep::kWait;
}

bool Stream::tls_readable_means_stale() const { return tls_->readable_means_stale(); }

void Stream::tls_set_deadline(Deadline deadline) { tls_->set_deadline(deadline); }

}  // namespace nvrtc_cache::store::remote::net
