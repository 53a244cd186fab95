// RedisConnector: how the Redis tier reaches one server (store/remote/redis/server_node.h) for one
// exchange — a pooled connection, else a new one: the address lookup and the connect within
// connect-timeout, the TLS handshake (rediss://) within the operation's deadline, then AUTH and
// SELECT pipelined in one round trip — and what a failed exchange or an unexpected reply means for the
// tier (kTimeout, kRefused or kError, with one line that names the server and never the password).
// A connection goes back to the pool only after complete replies; one that failed is dropped. The
// TLS context (trust store, client certificate) is made at the first TLS connection, not before (a
// tier that is configured but never used loads no OpenSSL), and kept.
// Contract (threads): thread-safe (the pools are; the TLS context is published lock-free once).
// fork: as ConnectionPool (a child never uses its parent's connections). Never throws (allocation
// failure aside).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "store/remote/redis/redis_config.h"
#include "store/remote/redis/resp_connection.h"
#include "store/remote/redis/server_node.h"
#include "store/remote/net/tls_settings.h"
#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote::redis {

// Replies to every command other than GET (and CLUSTER NODES, SCAN batches) are short.
inline constexpr std::uint64_t kSmallReply = 64 * 1024;

class RedisConnector {
 public:
  // `config`'s credentials, database and TLS settings; `options`' connect-timeout.
  RedisConnector(const RedisConfig& config, const TierOptions& options);
  ~RedisConnector();
  RedisConnector(const RedisConnector&) = delete;
  RedisConnector& operator=(const RedisConnector&) = delete;

  // Runs `exchange` (IoResult(RespConnection&)) on a connection to `server`: a pooled one, else a
  // new one. With `retry_on_fresh`, an exchange that failed on a pooled connection (closed by the
  // server while idle) runs once more on a new connection. kOk, or the failure of connecting or of
  // the exchange.
  template <typename Exchange>
  TierResult run(ServerNode& server, Deadline deadline, bool retry_on_fresh, Exchange&& exchange) {
    if (Clock::now() >= deadline) return result(TierCode::kTimeout, server.spec.display + ": no time left");
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<RespConnection> connection = server.pool.take();
      while (connection != nullptr && connection->stale()) connection = server.pool.take();
      const bool pooled = connection != nullptr;
      if (!pooled) {
        if (TierResult opened = open(server, deadline, &connection); !opened.ok()) return opened;
      }
      const IoResult io = exchange(*connection);
      if (io.ok()) {
        server.pool.give_back(std::move(connection));
        return result(TierCode::kOk);
      }
      connection.reset();
      if (pooled && retry_on_fresh && attempt == 0 && io.code == IoCode::kError && Clock::now() < deadline) continue;
      return io_failure(server, io);
    }
  }

  // A failed exchange as the tier reports it.
  static TierResult io_failure(const ServerNode& server, const IoResult& io);
  // What an error reply (or any reply the command does not expect) means for the caller.
  static TierResult unexpected(const ServerNode& server, const Reply& reply);

 private:
  // The TLS context, or why there is none (a file that cannot be used, no libssl.so.3).
  struct TlsSetup {
    std::shared_ptr<const net::TlsContext> context;
    std::string problem;
  };
  const TlsSetup& tls_setup();
  // Connects to `server`, runs the TLS handshake, authenticates and selects the database.
  TierResult open(ServerNode& server, Deadline deadline, std::unique_ptr<RespConnection>* out);
  static TierResult result(TierCode code, std::string detail = {}) { return TierResult{code, {}, std::move(detail)}; }

  std::string user_;
  std::string password_;
  unsigned db_;
  bool tls_;
  net::TlsSettings tls_settings_;
  std::chrono::milliseconds connect_timeout_;
  std::atomic<TlsSetup*> tls_setup_{nullptr};
};

}  // namespace nvrtc_cache::store::remote::redis
