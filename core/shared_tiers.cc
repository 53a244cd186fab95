#include "core/shared_tiers.h"

#include <string_view>
#include <utility>

#include "core/log.h"
#include "store/remote/tier_set.h"

namespace nvrtc_cache::core {

std::unique_ptr<store::Store> with_shared_tiers(std::unique_ptr<store::Store> local, const Config& config,
                                                store::remote::TieredStore** tiered) {
  store::remote::TierSet set = store::remote::open_tiers(config.remote, config.remote_secret_file);
  for (const auto& warning : set.warnings) log_line(LogLevel::kWarn, warning);
  for (const auto& problem : set.problems) log_line(LogLevel::kWarn, problem);
  if (set.tiers.empty()) return local;
  auto log = [](std::string_view topic, std::string_view message) { log_once(LogLevel::kWarn, topic, message); };
  auto wrapped =
      std::make_unique<store::remote::TieredStore>(std::move(local), std::move(set.tiers), std::move(set.secret), log);
  *tiered = wrapped.get();
  return wrapped;
}

}  // namespace nvrtc_cache::core
