#include "tests/support/redis_cluster.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "store/remote/redis/cluster_map.h"

namespace nvrtc_cache::testing {

using store::remote::redis::Reply;

RedisCluster::RedisCluster() {
  std::vector<std::string> create{"/usr/bin/redis-cli", "--no-auth-warning", "--cluster", "create"};
  for (int i = 0; i < kNodes; ++i) {
    RedisServerOptions options;
    options.cluster_bus = true;
    options.extra_arguments = {"--cluster-enabled",      "yes",  "--cluster-config-file", "nodes.conf",
                               "--cluster-node-timeout", "1000", "--masterauth",          options.password};
    nodes_.push_back(std::make_unique<RedisServer>(options));
    if (!nodes_.back()->ok()) return;
    create.push_back("127.0.0.1:" + std::to_string(nodes_.back()->port()));
  }
  create.insert(create.end(), {"--cluster-replicas", "1", "--cluster-yes", "-a", nodes_[0]->password()});
  const ProcessResult made = run_process(create, {}, "", 60);
  if (made.exit_code != 0) {
    ADD_FAILURE() << "redis-cli --cluster create failed:\n" << made.out << made.err;
    return;
  }
  ok_ = wait_until_ok(30);
  if (!ok_) ADD_FAILURE() << "the cluster did not reach cluster_state:ok";
}

std::string RedisCluster::url() const {
  return "redis+cluster://:" + nodes_[0]->password() + "@127.0.0.1:" + std::to_string(nodes_[0]->port());
}

bool RedisCluster::wait_until_ok(int seconds) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < give_up) {
    bool all = true;
    for (auto& node : nodes_) {
      if (!node->ok()) continue;
      const Reply info = node->command({"CLUSTER", "INFO"});
      if (info.text.find("cluster_state:ok") == std::string::npos) all = false;
    }
    // And every replica has its master's data (so that it may take over when the master dies).
    for (int i = 0; all && i < kNodes; ++i) {
      if (!node(i).ok()) continue;
      const std::string info = node(i).command({"INFO", "replication"}).text;
      if (info.find("role:slave") != std::string::npos && info.find("master_link_status:up") == std::string::npos)
        all = false;
    }
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::vector<int> RedisCluster::masters() {
  std::vector<int> out;
  for (int i = 0; i < kNodes; ++i) {
    if (!node(i).ok()) continue;
    if (node(i).command({"INFO", "replication"}).text.find("role:master") != std::string::npos) out.push_back(i);
  }
  return out;
}

int RedisCluster::owner_of(std::uint16_t slot) {
  for (int i : masters()) {
    const Reply nodes = node(i).command({"CLUSTER", "NODES"});
    const auto parsed = store::remote::redis::parse_cluster_nodes(nodes.text, "127.0.0.1");
    if (!parsed) continue;
    for (const auto& announced : *parsed) {
      if (announced.port != node(i).port() || announced.failed) continue;
      for (const auto& [first, last] : announced.slots) {
        if (slot >= first && slot <= last) return i;
      }
    }
  }
  return -1;
}

std::string RedisCluster::id_of(int i) { return node(i).command({"CLUSTER", "MYID"}).text; }

}  // namespace nvrtc_cache::testing
