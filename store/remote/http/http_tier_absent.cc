// The build without the HTTP tier (Windows: no libhttp-parser there): an http:// or https:// URL is
// refused when the tiers are opened, with one message, and the other tiers are used.
#include "store/remote/http/http_config.h"
#include "store/remote/tier.h"

namespace nvrtc_cache::store::remote {

std::unique_ptr<Tier> make_http_tier(const TierUrl& url, const TierOptions&, std::string* problem) {
  if (problem) *problem = url.display() + ": HTTP tiers are not available in this build; not used";
  return nullptr;
}

}  // namespace nvrtc_cache::store::remote
