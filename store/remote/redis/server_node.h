// ServerNode: one Redis server a tier talks to — a single server, one of its shards, or one node
// of a Redis Cluster — with its address lookup, its idle connections, and (cluster nodes) when it
// was last found down, so that commands routed to it fail fast until the slot map moves on.
// Contract (threads): thread-safe (the resolver and pool are; down_until is atomic). fork: as
// AddressResolver and ConnectionPool.
#pragma once

#include <atomic>
#include <chrono>

#include "store/remote/net/address_resolver.h"
#include "store/remote/net/connection_pool.h"
#include "store/remote/redis/redis_config.h"
#include "store/remote/redis/resp_connection.h"

namespace nvrtc_cache::store::remote::redis {

struct ServerNode {
  explicit ServerNode(ServerSpec s) : spec(std::move(s)), resolver(spec.host, spec.port, spec.socket_path) {}
  ServerSpec spec;
  net::AddressResolver resolver;
  net::ConnectionPool<RespConnection> pool;
  std::atomic<Clock::rep> down_until{0};  // steady-clock ticks; a cluster node is skipped until then

  bool down(Clock::time_point now) const { return now.time_since_epoch().count() < down_until.load(); }
  void mark_down(Clock::time_point until) { down_until.store(until.time_since_epoch().count()); }
};

}  // namespace nvrtc_cache::store::remote::redis
