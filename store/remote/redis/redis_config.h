// RedisConfig: what a redis:// or redis+unix:// tier URL asks for — the servers (one, or several
// shards), the credentials, the database — and the servers' addresses.
//
// URL forms (port 6379 and database 0 unless given):
//   redis://[[USER:]PASSWORD@]HOST[:PORT][/DB][?db=N&...]
//   rediss://...                                   (the same over TLS; tls-* attributes below)
//   redis+unix:///PATH/TO/SOCKET[?db=N&...]        (user and password as in redis://, if any)
//   redis+cluster://[[USER:]PASSWORD@]HOST[:PORT][?seeds=HOST:PORT,...]   (a Redis Cluster, seeded by
//                                                  these nodes; rediss+cluster:// over TLS; database 0)
// TLS attributes (rediss:// only): tls-ca-file, tls-ca-dir, tls-cert-file, tls-key-file,
// tls-server-name (store/remote/net/tls_session.h). There is no rediss+unix: Redis serves TLS on
// its TCP tls-port only.
// Shards: the host (or the socket path) holds one `*`, and `shards=A,B,C` lists what replaces it;
// each key goes to one shard by rendezvous hashing on the shard's name (store/remote/redis/
// shard_choice.h), so adding a shard moves only the keys the new one wins. A name may carry a weight,
// `A(2)`, for a server twice as large. When the host is `*`, a name may carry its own port
// (`shards=10.0.0.1:6379,10.0.0.2:6380`; IPv6 in brackets, `[::1]:6380`).
// Contract: pure parsing, no lookup (store/remote/net/address_resolver.h finds the addresses
// within an operation's deadline). Thread-safe (no shared state).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/remote/redis/resp_connection.h"
#include "store/remote/net/tls_settings.h"
#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote::redis {

struct ServerSpec {
  std::string shard_name;  // the name hashed for shard choice (empty when there is one server)
  double weight = 1.0;
  std::string host;  // TCP; empty for a unix socket
  std::uint16_t port = 6379;
  std::string socket_path;  // unix
  std::string display;      // "redis://host:port", "rediss://host:port" or "redis+unix:///path" (no secret)
};

struct RedisConfig {
  std::string user;
  std::string password;
  unsigned db = 0;
  std::vector<ServerSpec> servers;
  bool tls = false;                 // rediss://, rediss+cluster://
  bool cluster = false;             // redis+cluster://: `servers` are the seed nodes
  bool read_from_replicas = false;  // read-from=replica (clusters): GETs go to a replica first
  net::TlsSettings tls_settings;
};

// True for the schemes this tier serves: redis, rediss, redis+unix, redis+cluster, rediss+cluster.
bool is_redis_scheme(std::string_view scheme);
// True for the attributes only Redis tiers take (db, shards, seeds, read-from, tls-*).
bool is_redis_attribute(std::string_view name);

// The tier URL's Redis-specific parts; nullopt with *problem set when they are malformed.
std::optional<RedisConfig> redis_config(const TierUrl& url, std::string* problem);

}  // namespace nvrtc_cache::store::remote::redis
