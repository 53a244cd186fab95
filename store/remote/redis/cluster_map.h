// Redis Cluster's routing facts, as pure functions: a key's hash slot (CRC16 of the key, or of its
// first non-empty {hash tag}, mod 16384), the nodes and slot ranges a `CLUSTER NODES` reply
// describes, and the target of a -MOVED / -ASK redirection.
// Contract: pure parsing of untrusted server text (anything malformed is rejected, nothing is
// trusted beyond the documented format), bounded: a CLUSTER NODES reply of more than
// kMaxClusterNodesReply bytes or kMaxClusterNodes nodes, or whose ranges list more than the
// cluster's 16384 slots (a slot twice), is rejected, so parsing it and applying it to a slot map
// cost time linear in its size; thread-safe; never throws (allocation failure aside).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvrtc_cache::store::remote::redis {

inline constexpr std::uint16_t kClusterSlots = 16384;
// The most nodes a cluster map holds (Redis suggests at most 1000), and the largest CLUSTER NODES
// reply read: a line is ~100-300 bytes, and the slot ranges of all the nodes together at most
// 16384 entries.
inline constexpr std::size_t kMaxClusterNodes = 1024;
inline constexpr std::size_t kMaxClusterNodesReply = 2 * 1024 * 1024;

// The hash slot of a Redis key.
std::uint16_t key_slot(std::string_view key);

struct ClusterNode {
  std::string id;         // the node's ID
  std::string master_id;  // a replica's master's ID; "" for a master
  std::string host;       // as announced (an IP address, or the host of the node that answered when empty)
  std::uint16_t port = 0;
  bool master = false;
  bool failed = false;  // flagged fail / fail? / noaddr / handshake: owns nothing usable
  std::vector<std::pair<std::uint16_t, std::uint16_t>> slots;  // inclusive ranges it serves
};

// The nodes of a CLUSTER NODES reply; `answering_host` stands in for an empty address (a node that
// does not know its own IP says ":port"). nullopt when a line is malformed.
std::optional<std::vector<ClusterNode>> parse_cluster_nodes(std::string_view text, const std::string& answering_host);

struct Redirect {
  bool moved = false;  // MOVED (update the map) or ASK (this command only, after ASKING)
  std::uint16_t slot = 0;
  std::string host;
  std::uint16_t port = 0;
};

// "MOVED 3999 127.0.0.1:6381" / "ASK 3999 [::1]:6381" (an error reply's text); nullopt otherwise. An
// empty host ("MOVED 3999 :6381", an unknown endpoint) means the host of the node that answered.
std::optional<Redirect> parse_redirect(std::string_view error);

}  // namespace nvrtc_cache::store::remote::redis
