#include "shim/flight/runtime_flight.h"

#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include "core/log.h"
#include "shim/runtime.h"
#include "shim/flight/single_flight.h"
#include "store/remote/claim_renewer.h"
#include "store/remote/tiered_store.h"

namespace nvrtc_cache::shim {
namespace {

using std::chrono::nanoseconds;

constexpr std::chrono::milliseconds kFirstSharedPoll{50};
constexpr std::chrono::milliseconds kLongestSharedPoll{200};

// When the shared tiers are next consulted during a wait: 50 ms after the last time, doubling to 200 ms.
class SharedPolls {
 public:
  bool due() {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return false;
    next_ = now + interval_;
    interval_ = std::min(interval_ * 2, kLongestSharedPoll);
    return true;
  }
  std::chrono::milliseconds interval() const { return interval_; }

 private:
  std::chrono::steady_clock::time_point next_{};
  std::chrono::milliseconds interval_ = kFirstSharedPoll;
};

// Single-flight across nodes on the TieredStore's claim-capable tiers.
class TieredFlight final : public SharedTierFlight {
 public:
  explicit TieredFlight(store::remote::TieredStore& tiered) : tiered_(tiered) {}

  // Every poll looks in the local store; the shared tiers only now and then.
  std::function<bool()> polling(const std::function<bool()>& result_ready) override {
    return [this, &result_ready] {
      const store::remote::SharedLookups consult(polls_.due());
      return result_ready();
    };
  }

  void claim_across_nodes(const std::string& name, nanoseconds timeout, const std::function<bool()>& result_ready,
                          ClaimAttempt& attempt) override {
    const std::chrono::milliseconds lease = store::remote::kClaimLease;  // renewed while held
    store::remote::RemoteClaim remote = tiered_.try_claim(name, lease);
    if (remote.code() != store::remote::ClaimCode::kHeldByOther) {
      attempt.across = std::make_shared<store::remote::RemoteClaim>(std::move(remote));
      return;
    }
    core::log_debug([&] { return "waiting for a compile of " + name + " on another node"; });
    const auto started = std::chrono::steady_clock::now();
    const auto deadline = started + std::max(nanoseconds::zero(), timeout - nanoseconds(attempt.wait_ns));
    SharedPolls polls;
    (void)polls.due();
    while (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::min<nanoseconds>(polls.interval(), deadline - std::chrono::steady_clock::now()));
      (void)polls.due();
      bool ready = false;
      {
        const store::remote::SharedLookups consult(true);
        ready = result_ready();
      }
      if (ready) {
        attempt.claim.release();
        attempt.outcome = ClaimOutcome::kReady;
        break;
      }
      remote = tiered_.try_claim(name, lease);
      if (remote.code() !=
          store::remote::ClaimCode::kHeldByOther) {  // taken over (the holder finished or died), or failed
        attempt.across = std::make_shared<store::remote::RemoteClaim>(std::move(remote));
        break;
      }
    }
    attempt.waited = true;
    attempt.wait_ns += std::chrono::duration_cast<nanoseconds>(std::chrono::steady_clock::now() - started).count();
  }

 private:
  store::remote::TieredStore& tiered_;
  SharedPolls polls_;
};

}  // namespace

ClaimAttempt claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready) {
  Runtime& runtime = Runtime::instance();
  const core::Config& config = runtime.config();
  std::optional<TieredFlight> tiers;
  if (runtime.tiered_store() != nullptr) tiers.emplace(*runtime.tiered_store());
  FlightSettings settings;
  settings.cache_directory = runtime.cache_directory();
  settings.shared = config.shared;
  settings.wait_timeout = config.wait_timeout;
  settings.stats = &runtime.stats();
  settings.tiers = tiers ? &*tiers : nullptr;
  return shim::claim_or_wait(settings, key, result_ready);
}

}  // namespace nvrtc_cache::shim
