// Until the Redis tier is built: redis:// and redis+unix:// URLs are reported and skipped.
#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote {

std::unique_ptr<Tier> make_redis_tier(const TierUrl& url, const TierOptions&, std::string* problem) {
  if (problem) *problem = "Redis tiers are not built; skipping " + url.display();
  return nullptr;
}

}  // namespace nvrtc_cache::store::remote
