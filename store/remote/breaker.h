// Breaker: a circuit breaker per shared tier, so that a dead or slow tier costs a compile nothing
// for most of the time it is down, and is tried again once it may be back (processes live for days:
// disabling a tier for good would be wrong, retrying on every compile too slow).
// States: closed (every call goes through) -> open after one timeout or kFailuresToOpen consecutive
// errors (calls are skipped) -> after the cooldown, half-open: exactly one call (the probe) goes
// through; its success closes the breaker, its failure reopens it with the cooldown doubled (5 s up
// to 60 s). A timeout opens it at once because it has already cost its caller the whole deadline: a
// compile meets at most one timeout per tier, however many operations it makes there (lookup, claim,
// re-lookup). Errors (refused, reset, an error reply) come back at once, so three are tolerated;
// one that came back only after half the timeout is fed as a timeout (store/remote/tiered_store.cc).
// A probe that never reports back is replaced after the longest cooldown.
// Contract: lock-free (atomics only), thread-safe and fork-safe; `now` is passed in so tests drive
// the clock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace nvrtc_cache::store::remote {

enum class BreakerState { kClosed, kOpen, kHalfOpen };

class Breaker {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kFailuresToOpen = 3;
  static constexpr std::chrono::milliseconds kFirstCooldown{5000};
  static constexpr std::chrono::milliseconds kLongestCooldown{60000};

  // What allow() granted; pass it back to succeeded()/failed().
  enum class Pass { kDenied, kClosed, kProbe };
  enum class Failure { kError, kTimeout };

  Pass allow(Clock::time_point now);
  void succeeded(Pass pass);
  void failed(Pass pass, Clock::time_point now, Failure failure = Failure::kError);

  BreakerState state(Clock::time_point now) const;
  // Times the breaker went from closed to open (monotonic, for the statistics).
  std::uint64_t times_opened() const { return opened_.load(std::memory_order_relaxed); }

 private:
  static std::int64_t ns(Clock::time_point t) { return t.time_since_epoch().count(); }
  void open_until(std::int64_t until);

  std::atomic<int> consecutive_failures_{0};
  std::atomic<std::int64_t> open_until_ns_{0};   // 0: closed
  std::atomic<std::int64_t> probe_since_ns_{0};  // 0: no probe in flight
  std::atomic<std::int64_t> cooldown_ns_{std::chrono::nanoseconds(kFirstCooldown).count()};
  std::atomic<std::uint64_t> opened_{0};
};

const char* breaker_state_name(BreakerState state);

}  // namespace nvrtc_cache::store::remote
