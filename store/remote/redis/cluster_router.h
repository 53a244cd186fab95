// ClusterRouter: which node of a Redis Cluster serves a hash slot (store/remote/redis/
// cluster_map.h), for the redis+cluster:// tier. It starts from the seed nodes of the URL; the tier
// fills the slot map from CLUSTER NODES (apply()), moves a single slot on -MOVED (set_slot()) and
// asks for a full refresh then, and after a node was found down or the cluster said TRYAGAIN or
// CLUSTERDOWN (request_refresh()). Nodes are found by address (node_at()) and added as the
// cluster announces them; none is ever removed while the tier lives.
// Contract (threads, fork): lock-free — nodes live in a fixed array of atomic pointers, published
// once, and the slot map is an array of atomic node numbers, so a reader during a refresh sees each
// slot's old or new owner (either may answer MOVED, which is followed); one refresh runs at a time
// (begin_refresh() / end_refresh(), an atomic flag), others keep the map they see. No lock exists
// that a fork could inherit held.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "store/remote/redis/cluster_map.h"
#include "store/remote/redis/server_node.h"

namespace nvrtc_cache::store::remote::redis {

class ClusterRouter {
 public:
  // `seeds`' displays use `scheme` ("redis" or "rediss"), as every node added later does.
  ClusterRouter(std::vector<ServerSpec> seeds, std::string scheme);
  ~ClusterRouter();
  ClusterRouter(const ClusterRouter&) = delete;
  ClusterRouter& operator=(const ClusterRouter&) = delete;

  // The node mapped to `slot`; nullptr when the map does not know it (before the first refresh,
  // or while no node serves it).
  ServerNode* node_for_slot(std::uint16_t slot) const;
  // A replica of the master mapped to `slot` (the slots of a master with several replicas are spread
  // over them); nullptr when it has none that is not failed.
  ServerNode* replica_for_slot(std::uint16_t slot) const;
  // The node at host:port, added when new; nullptr only when the node table is full.
  ServerNode* node_at(const std::string& host, std::uint16_t port);
  void set_slot(std::uint16_t slot, ServerNode* node);
  // Replaces the map with `nodes`' masters' slots (failed masters serve nothing), and the replica map
  // with their replicas that are not failed.
  void apply(const std::vector<ClusterNode>& nodes);

  bool needs_refresh() const { return stale_.load(std::memory_order_acquire); }
  void request_refresh() { stale_.store(true, std::memory_order_release); }
  // True for the one caller that may refresh now; it calls end_refresh(refreshed) when done.
  bool begin_refresh() { return !refreshing_.test_and_set(std::memory_order_acq_rel); }
  // Whether a refresh is under way (a caller that found no node for its slot may wait for it).
  bool refreshing() const { return refreshing_.test(std::memory_order_acquire); }
  void end_refresh(bool refreshed);

  // Every known node: the seeds first, then in the order they were announced.
  std::vector<ServerNode*> nodes() const;
  // The nodes that serve at least one slot now.
  std::vector<ServerNode*> masters() const;

 private:
  static constexpr std::size_t kMaxNodes = kMaxClusterNodes;
  std::uint16_t number_of(ServerNode* node) const;  // its index + 1; 0 when it is not in the table
  std::string scheme_;
  std::array<std::atomic<ServerNode*>, kMaxNodes> nodes_{};
  std::array<std::atomic<std::uint16_t>, kClusterSlots> slots_{};     // node index + 1; 0: unknown
  std::array<std::atomic<std::uint16_t>, kClusterSlots> replicas_{};  // node index + 1; 0: none
  std::atomic<bool> stale_{true};
  std::atomic_flag refreshing_;
};

}  // namespace nvrtc_cache::store::remote::redis
