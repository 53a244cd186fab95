// Test support: a real Redis Cluster of the test's own — 6 redis-server processes
// (tests/support/redis_server.h) with --cluster-enabled yes, a password (and --masterauth), and a
// short cluster-node-timeout (1 s, so a replica takes over a killed master within a few seconds),
// joined by `redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes`: 3 masters with a
// replica each. The constructor returns once every node reports cluster_state:ok.
// Contract: test-only; blocking; not thread-safe. A cluster that cannot be made fails the current
// test (ok() is false then).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/support/redis_server.h"

namespace nvrtc_cache::testing {

class RedisCluster {
 public:
  static constexpr int kNodes = 6;
  RedisCluster();
  bool ok() const { return ok_; }
  RedisServer& node(int i) { return *nodes_[static_cast<std::size_t>(i)]; }
  // "redis+cluster://:PASSWORD@127.0.0.1:PORT-OF-NODE-0" (one seed: the rest is discovered).
  std::string url() const;
  // The nodes that are masters now and still running (ROLE through INFO replication).
  std::vector<int> masters();
  // The index of the running node that serves `slot` as a master; -1 when none does.
  int owner_of(std::uint16_t slot);
  std::string id_of(int i);
  // Waits (at most `seconds`) until every running node reports cluster_state:ok and every replica's
  // link to its master is up.
  bool wait_until_ok(int seconds);

 private:
  std::vector<std::unique_ptr<RedisServer>> nodes_;
  bool ok_ = false;
};

}  // namespace nvrtc_cache::testing
