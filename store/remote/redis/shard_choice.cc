#include "store/remote/redis/shard_choice.h"

#include <xxhash.h>

#include <cmath>

namespace nvrtc_cache::store::remote::redis {

std::size_t choose_shard(std::string_view key, std::span<const ShardWeight> shards) {
  if (shards.size() <= 1) return 0;
  std::size_t best = 0;
  double best_score = -1.0;
  std::string buffer;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    buffer.assign(key);
    buffer.append(shards[i].name);
    const XXH64_hash_t hash = XXH3_64bits(buffer.data(), buffer.size());
    // The top 53 bits as a double in (0, 1): never 0, so the logarithm is finite and negative.
    const double u = (static_cast<double>(hash >> 11) + 0.5) * 0x1p-53;
    const double score = shards[i].weight / -std::log(u);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  return best;
}

}  // namespace nvrtc_cache::store::remote::redis
