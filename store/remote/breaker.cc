#include "store/remote/breaker.h"

#include <algorithm>

namespace nvrtc_cache::store::remote {
namespace {
constexpr std::int64_t kLongestNs = std::chrono::nanoseconds(Breaker::kLongestCooldown).count();
constexpr std::int64_t kFirstNs = std::chrono::nanoseconds(Breaker::kFirstCooldown).count();
}  // namespace

Breaker::Pass Breaker::allow(Clock::time_point now) {
  const std::int64_t until = open_until_ns_.load(std::memory_order_acquire);
  if (until == 0) return Pass::kClosed;
  const std::int64_t t = ns(now);
  if (t < until) return Pass::kDenied;
  std::int64_t probe = probe_since_ns_.load(std::memory_order_acquire);
  if (probe != 0 && t - probe < kLongestNs) return Pass::kDenied;  // one probe at a time
  return probe_since_ns_.compare_exchange_strong(probe, std::max<std::int64_t>(t, 1)) ? Pass::kProbe : Pass::kDenied;
}

void Breaker::succeeded(Pass pass) {
  consecutive_failures_.store(0, std::memory_order_relaxed);
  if (pass != Pass::kProbe) return;
  cooldown_ns_.store(kFirstNs, std::memory_order_relaxed);
  open_until_ns_.store(0, std::memory_order_release);
  probe_since_ns_.store(0, std::memory_order_release);
}

void Breaker::open_until(std::int64_t until) {
  open_until_ns_.store(std::max<std::int64_t>(until, 1), std::memory_order_release);
}

void Breaker::failed(Pass pass, Clock::time_point now, Failure failure) {
  const std::int64_t t = ns(now);
  if (pass == Pass::kProbe) {
    const std::int64_t cooldown = std::min(cooldown_ns_.load(std::memory_order_relaxed) * 2, kLongestNs);
    cooldown_ns_.store(cooldown, std::memory_order_relaxed);
    open_until(t + cooldown);
    probe_since_ns_.store(0, std::memory_order_release);
    return;
  }
  if (pass != Pass::kClosed) return;
  const int failures = consecutive_failures_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (failure != Failure::kTimeout && failures < kFailuresToOpen) return;
  std::int64_t closed = 0;
  if (open_until_ns_.compare_exchange_strong(closed, std::max<std::int64_t>(t + cooldown_ns_.load(), 1))) {
    opened_.fetch_add(1, std::memory_order_relaxed);
  }
}

BreakerState Breaker::state(Clock::time_point now) const {
  const std::int64_t until = open_until_ns_.load(std::memory_order_acquire);
  if (until == 0) return BreakerState::kClosed;
  return ns(now) < until ? BreakerState::kOpen : BreakerState::kHalfOpen;
}

const char* breaker_state_name(BreakerState state) {
  switch (state) {
    case BreakerState::kClosed:
      return "closed";
    case BreakerState::kOpen:
      return "open";
    case BreakerState::kHalfOpen:
      return "half-open";
  }
  return "?";
}

}  // namespace nvrtc_cache::store::remote
