#include "store/remote/redis/cluster_router.h"

namespace nvrtc_cache::store::remote::redis {
namespace {

std::string display(const std::string& scheme, const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return scheme + "+cluster://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

ClusterRouter::ClusterRouter(std::vector<ServerSpec> seeds, std::string scheme) : scheme_(std::move(scheme)) {
  for (ServerSpec& seed : seeds) (void)node_at(seed.host, seed.port);
}

ClusterRouter::~ClusterRouter() {
  for (auto& node : nodes_) delete node.load();
}

ServerNode* ClusterRouter::node_for_slot(std::uint16_t slot) const {
  const std::uint16_t number = slots_[slot].load(std::memory_order_acquire);
  return number == 0 ? nullptr : nodes_[number - 1u].load(std::memory_order_acquire);
}

ServerNode* ClusterRouter::replica_for_slot(std::uint16_t slot) const {
  const std::uint16_t number = replicas_[slot].load(std::memory_order_acquire);
  return number == 0 ? nullptr : nodes_[number - 1u].load(std::memory_order_acquire);
}

std::uint16_t ClusterRouter::number_of(ServerNode* node) const {
  for (std::size_t i = 0; i < kMaxNodes && node != nullptr; ++i) {
    if (nodes_[i].load(std::memory_order_acquire) == node) return static_cast<std::uint16_t>(i + 1);
  }
  return 0;
}

ServerNode* ClusterRouter::node_at(const std::string& host, std::uint16_t port) {
  for (std::size_t i = 0; i < kMaxNodes; ++i) {
    ServerNode* node = nodes_[i].load(std::memory_order_acquire);
    if (node == nullptr) {
      ServerSpec spec;
      spec.host = host;
      spec.port = port;
      spec.display = display(scheme_, host, port);
      auto made = std::make_unique<ServerNode>(std::move(spec));
      ServerNode* expected = nullptr;
      if (nodes_[i].compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel)) return made.release();
      node = expected;  // another thread published this slot first: compare with it
    }
    if (node->spec.host == host && node->spec.port == port) return node;
  }
  return nullptr;
}

void ClusterRouter::set_slot(std::uint16_t slot, ServerNode* node) {
  for (std::size_t i = 0; i < kMaxNodes && node != nullptr; ++i) {
    if (nodes_[i].load(std::memory_order_acquire) == node) {
      slots_[slot].store(static_cast<std::uint16_t>(i + 1), std::memory_order_release);
      return;
    }
  }
}

void ClusterRouter::apply(const std::vector<ClusterNode>& nodes) {
  std::vector<std::uint16_t> map(kClusterSlots, 0), replica_map(kClusterSlots, 0);
  for (const ClusterNode& announced : nodes) {
    if (!announced.master || announced.failed || announced.slots.empty()) continue;
    const std::uint16_t number = number_of(node_at(announced.host, announced.port));
    if (number == 0) continue;
    // Its replicas that can serve reads: slot by slot, in turn.
    std::vector<std::uint16_t> replicas;
    for (const ClusterNode& replica : nodes) {
      if (replica.failed || replica.master_id.empty() || replica.master_id != announced.id) continue;
      if (const std::uint16_t r = number_of(node_at(replica.host, replica.port)); r != 0) replicas.push_back(r);
    }
    for (const auto& [first, last] : announced.slots) {
      for (std::size_t slot = first; slot <= last; ++slot) {
        map[slot] = number;
        if (!replicas.empty()) replica_map[slot] = replicas[slot % replicas.size()];
      }
    }
  }
  for (std::size_t slot = 0; slot < kClusterSlots; ++slot) {
    slots_[slot].store(map[slot], std::memory_order_release);
    replicas_[slot].store(replica_map[slot], std::memory_order_release);
  }
}

void ClusterRouter::end_refresh(bool refreshed) {
  if (refreshed) stale_.store(false, std::memory_order_release);
  refreshing_.clear(std::memory_order_release);
}

std::vector<ServerNode*> ClusterRouter::nodes() const {
  std::vector<ServerNode*> out;
  for (const auto& slot : nodes_) {
    ServerNode* node = slot.load(std::memory_order_acquire);
    if (node == nullptr) break;
    out.push_back(node);
  }
  return out;
}

std::vector<ServerNode*> ClusterRouter::masters() const {
  std::vector<bool> serving(kMaxNodes + 1, false);
  for (const auto& slot : slots_) serving[slot.load(std::memory_order_acquire)] = true;
  std::vector<ServerNode*> out;
  for (std::size_t i = 0; i < kMaxNodes; ++i) {
    ServerNode* node = nodes_[i].load(std::memory_order_acquire);
    if (node == nullptr) break;
    if (serving[i + 1]) out.push_back(node);
  }
  return out;
}

}  // namespace nvrtc_cache::store::remote::redis
