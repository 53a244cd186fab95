// The HTTP tier (make_http_tier in store/remote/tier.h): entries under the layout of store/remote/
// http/http_config.h, values stored as given (sealed), GET (200 a hit, 404/410 a miss), PUT (always
// replacing: see below), HEAD and DELETE for the check's probe. Keep-alive connections in a lock-free pool
// (net::ConnectionPool): an idle one the server closed is noticed before use (stale()), and a
// request that fails on a pooled connection before any response byte is sent once more on a new
// connection (every request the tier makes is idempotent).
// What answers mean: 2xx success; 404/410 a miss (GET) or absent (HEAD); 401, 403, 405, 413 and
// 507 a refusal (credentials, permissions, no WebDAV PUT, too large, full); a redirect (3xx) is not
// followed and is an error naming its Location (point the URL at the final location: following a
// redirect could send the credentials elsewhere); anything else (5xx, garbage, a truncated body)
// an error. Errors and timeouts feed the tiered store's breaker; refusals do not.
// No HEAD before a PUT: ccache asks HEAD before a non-overwriting PUT, but every write of this tier
// must overwrite — a manifest grows as nodes add dependency sets under the same key, and a value that
// failed verification here (corrupt, unsigned, planted) is repaired only by the next write of its
// key; a HEAD that found "something" there would keep either from happening. (A race of two nodes
// writing one result costs one extra upload of the same bytes.)
// Claims: an HTTP cache has no atomic create-if-absent that every server honours, so the tier does
// not claim (try_claim answers kUnsupported: cross-node single-flight needs a Redis tier). Nor can
// it be listed (for_each_value: kRefused).
#include <atomic>

#include "platform/errno_guard.h"
#include "platform/fork_locks.h"
#include "store/remote/http/http_config.h"
#include "store/remote/http/http_connection.h"
#include "store/remote/net/address_resolver.h"
#include "store/remote/net/connection_pool.h"
#include "store/remote/net/tls_session.h"
#include "store/remote/sealed_value.h"
#include "store/remote/tier.h"
#include "util/clock.h"

namespace nvrtc_cache::store::remote {
namespace {

using http::HttpConnection;
using http::HttpRequest;
using http::HttpResponse;
using net::IoCode;
using net::IoResult;

// Replies other than a GET's body (error pages, a PUT's answer) are read up to this size.
constexpr std::uint64_t kSmallBody = 64 * 1024;
// A value read back may exceed the sealed size of max-entry-size by this much (as the Redis tier).
constexpr std::uint64_t kBodySlack = 64 * 1024;

TierResult result(TierCode code, std::string detail = {}) { return TierResult{code, {}, std::move(detail)}; }

class HttpTier final : public Tier {
 public:
  HttpTier(http::HttpConfig config, const TierOptions& options, std::string display_name)
      : config_(std::move(config)),
        options_(options),
        display_name_(std::move(display_name)),
        resolver_(config_.host, config_.port, std::string()) {
    const bool v6 = config_.host.find(':') != std::string::npos;
    host_header_ = v6 ? "[" + config_.host + "]" : config_.host;
    if (config_.port != (config_.tls ? 443 : 80)) host_header_ += ":" + std::to_string(config_.port);
  }
  ~HttpTier() override { delete tls_setup_.load(); }

  const std::string& display_name() const override { return display_name_; }
  bool writable() const override { return !options_.read_only; }

  TierResult get(std::string_view key, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    const std::string target = http::entry_target(config_, options_.prefix, key);
    HttpResponse response;
    const std::uint64_t cap = sealed_size(kMaxSealedKey, options_.max_entry_size, true) + kBodySlack;
    if (TierResult io = request("GET", target, {}, cap, deadline, &response); !io.ok()) return io;
    if (response.status == 200) return TierResult{TierCode::kOk, std::move(response.body), {}};
    if (response.status == 404 || response.status == 410) return result(TierCode::kMiss);
    return unexpected("GET", response);
  }

  TierResult put(std::string_view key, std::string_view value, Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    if (options_.read_only) return result(TierCode::kRefused, display_name_ + " is read-only");
    if (value.size() > options_.max_entry_size) {
      return result(TierCode::kRefused, "value of " + std::to_string(value.size()) +
                                            " bytes is larger than max-entry-size (" +
                                            std::to_string(options_.max_entry_size) + ")");
    }
    const std::string target = http::entry_target(config_, options_.prefix, key);
    HttpResponse response;
    if (TierResult io = request("PUT", target, value, kSmallBody, deadline, &response); !io.ok()) return io;
    if (response.status >= 200 && response.status < 300) return result(TierCode::kOk);
    return unexpected("PUT", response);
  }

  TierResult check(Deadline deadline) override {
    const platform::ErrnoGuard errno_guard;
    const std::string key = "nvrtc-cache-check-" + std::to_string(::getpid()) + "-" + std::to_string(util::steady_ns());
    const std::string target = http::entry_target(config_, options_.prefix, key);
    HttpResponse response;
    if (options_.read_only) {
      if (TierResult io = request("HEAD", target, {}, 0, deadline, &response); !io.ok()) return io;
      if (response.status == 200 || response.status == 404) return result(TierCode::kOk);
      return unexpected("HEAD", response);
    }
    const std::string probe = seal_value(key, "check", nullptr);
    if (TierResult io = request("PUT", target, probe, kSmallBody, deadline, &response); !io.ok()) return io;
    if (response.status < 200 || response.status >= 300) return unexpected("PUT", response);
    if (TierResult io = request("GET", target, {}, kSmallBody, deadline, &response); !io.ok()) return io;
    const bool same = response.status == 200 && response.body == probe;
    const unsigned got = response.status;
    (void)request("DELETE", target, {}, kSmallBody, deadline, &response);  // a server without DELETE keeps it
    if (got == 404) return result(TierCode::kError, display_name_ + ": an entry written was not found");
    if (got != 200) {
      response.status = got;
      return unexpected("GET", response);
    }
    if (!same) return result(TierCode::kError, display_name_ + ": read back other bytes");
    return result(TierCode::kOk);
  }

 private:
  struct TlsSetup {
    std::shared_ptr<const net::TlsContext> context;
    std::string problem;
  };

  const TlsSetup& tls_setup() {
    return *platform::publish_once(tls_setup_, [this] {
      auto* setup = new TlsSetup;
      setup->context = net::TlsContext::create(config_.tls_settings, &setup->problem);
      return setup;
    });
  }

  TierResult io_failure(const IoResult& io) const {
    return result(io.code == IoCode::kTimeout ? TierCode::kTimeout : TierCode::kError,
                  display_name_ + ": " + io.detail);
  }

  // What a status the operation did not expect means.
  TierResult unexpected(const char* method, const HttpResponse& response) const {
    const unsigned s = response.status;
    const std::string status = std::string(method) + " answered HTTP " + std::to_string(s);
    if (s == 401 || s == 403) return result(TierCode::kRefused, display_name_ + ": " + status + " (credentials?)");
    if (s == 405 || s == 501)
      return result(TierCode::kRefused,
                    display_name_ + ": " + status + " (the server does not allow " + method + "; WebDAV PUT off?)");
    if (s == 413)
      return result(TierCode::kRefused, display_name_ + ": " + status + " (entry too large for the server)");
    if (s == 507) return result(TierCode::kRefused, display_name_ + ": " + status + " (the server is full)");
    if (s >= 300 && s < 400) {
      return result(TierCode::kError, display_name_ + ": " + status + " (a redirect" +
                                          (response.location.empty() ? "" : " to " + response.location) +
                                          "; redirects are not followed: use the final URL)");
    }
    return result(TierCode::kError, display_name_ + ": " + status);
  }

  // Connects (within connect-timeout) and runs the TLS handshake (within the operation's deadline).
  TierResult open(Deadline deadline, std::unique_ptr<HttpConnection>* out) {
    const Deadline connect_deadline = std::min(deadline, Clock::now() + options_.connect_timeout);
    std::vector<net::SocketAddress> addresses;
    if (IoResult found = resolver_.addresses(connect_deadline, &addresses); !found.ok()) return io_failure(found);
    IoResult why;
    auto connection = HttpConnection::connect(addresses, connect_deadline, &why);
    if (connection == nullptr) return io_failure(why);
    if (config_.tls) {
      const TlsSetup& tls = tls_setup();
      if (tls.context == nullptr) return result(TierCode::kError, display_name_ + ": " + tls.problem);
      if (IoResult secured = connection->start_tls(tls.context, config_.host, deadline); !secured.ok())
        return io_failure(secured);
    }
    *out = std::move(connection);
    return result(TierCode::kOk);
  }

  // One request on a pooled connection, else a new one; kOk with the response, or the failure.
  TierResult request(std::string_view method, const std::string& target, std::string_view body, std::uint64_t max_body,
                     Deadline deadline, HttpResponse* response) {
    if (Clock::now() >= deadline) return result(TierCode::kTimeout, display_name_ + ": no time left");
    const HttpRequest request{method, target, host_header_, config_.authorization, body};
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<HttpConnection> connection = pool_.take();
      while (connection != nullptr && connection->stale()) connection = pool_.take();
      const bool pooled = connection != nullptr;
      if (!pooled) {
        if (TierResult opened = open(deadline, &connection); !opened.ok()) return opened;
      }
      bool received = false;
      const IoResult io = connection->exchange(request, max_body, deadline, response, &received);
      if (io.ok()) {
        if (connection->reusable()) pool_.give_back(std::move(connection));
        return result(TierCode::kOk);
      }
      connection.reset();
      if (pooled && attempt == 0 && !received && io.code == IoCode::kError && Clock::now() < deadline) continue;
      return io_failure(io);
    }
  }

  http::HttpConfig config_;
  TierOptions options_;
  std::string display_name_;
  std::string host_header_;
  net::AddressResolver resolver_;
  net::ConnectionPool<HttpConnection> pool_;
  std::atomic<TlsSetup*> tls_setup_{nullptr};
};

}  // namespace

std::unique_ptr<Tier> make_http_tier(const TierUrl& url, const TierOptions& options, std::string* problem) {
  const platform::ErrnoGuard errno_guard;  // bearer-token-file is read here
  std::string why;
  std::optional<http::HttpConfig> config = http::http_config(url, &why);
  if (!config) {
    if (problem) *problem = why;
    return nullptr;
  }
  return std::make_unique<HttpTier>(std::move(*config), options, url.display());
}

}  // namespace nvrtc_cache::store::remote
