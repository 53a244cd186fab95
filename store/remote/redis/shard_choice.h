// Shard choice by weighted rendezvous (highest random weight) hashing, as ccache does for its
// `shards`: every shard scores the key, score = weight / -ln(u) with u = XXH3-64(key || shard name)
// mapped into (0, 1), and the highest score wins. Adding a shard moves only the keys it wins (about
// its share of the total weight); removing one moves only its own keys.
// Contract: pure; thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace nvrtc_cache::store::remote::redis {

struct ShardWeight {
  std::string_view name;
  double weight = 1.0;
};

// The index of the shard `key` belongs to; 0 when there is one shard (or none).
std::size_t choose_shard(std::string_view key, std::span<const ShardWeight> shards);

}  // namespace nvrtc_cache::store::remote::redis
