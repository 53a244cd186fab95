// RedisConfig: what a redis:// or redis+unix:// tier URL asks for — the servers (one, or several
// shards), the credentials, the database — and the servers' addresses.
//
// URL forms (port 6379 and database 0 unless given):
//   redis://[[USER:]PASSWORD@]HOST[:PORT][/DB][?db=N&...]
//   redis+unix:///PATH/TO/SOCKET[?db=N&...]        (user and password as in redis://, if any)
// Shards: the host (or the socket path) holds one `*`, and `shards=A,B,C` lists what replaces it;
// each key goes to one shard by rendezvous hashing on the shard's name (store/remote/redis/
// shard_choice.h), so adding a shard moves only the keys the new one wins. A name may carry a weight,
// `A(2)`, for a server twice as large. When the host is `*`, a name may carry its own port
// (`shards=10.0.0.1:6379,10.0.0.2:6380`; IPv6 in brackets, `[::1]:6380`).
// Contract: pure parsing, no lookup (store/remote/redis/address_resolver.h finds the addresses
// within an operation's deadline). Thread-safe (no shared state).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/remote/redis/resp_connection.h"
#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote::redis {

struct ServerSpec {
  std::string shard_name;  // the name hashed for shard choice (empty when there is one server)
  double weight = 1.0;
  std::string host;  // TCP; empty for a unix socket
  std::uint16_t port = 6379;
  std::string socket_path;  // unix
  std::string display;      // "redis://host:port" or "redis+unix:///path" (never a secret)
};

struct RedisConfig {
  std::string user;
  std::string password;
  unsigned db = 0;
  std::vector<ServerSpec> servers;
};

// The tier URL's Redis-specific parts; nullopt with *problem set when they are malformed.
std::optional<RedisConfig> redis_config(const TierUrl& url, std::string* problem);

// The URL for logs: scheme, user, "***" for a password, host, port, database, shards.
std::string redis_display_name(const TierUrl& url);

}  // namespace nvrtc_cache::store::remote::redis
