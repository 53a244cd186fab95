#include "shim/single_flight.h"

#include <algorithm>
#include <string>
#include <thread>

#include "core/log.h"
#include "shim/runtime.h"
#include "store/remote/claim_renewer.h"
#include "store/remote/tiered_store.h"

namespace nvrtc_cache::shim {
namespace {

using std::chrono::nanoseconds;

// The claims of the cache directory in use, or nullptr when the store is not open.
ClaimDirectory* claim_directory() {
  static ClaimDirectory* directory = []() -> ClaimDirectory* {
    Runtime& runtime = Runtime::instance();
    if (runtime.cache_directory().empty()) return nullptr;
    auto* d = new ClaimDirectory(runtime.cache_directory() + "/claims", runtime.config().shared);  // leaked
    if (!d->usable())
      core::log_line(core::LogLevel::kInfo, "compiles of one program are not coordinated: " + d->problem());
    return d;
  }();
  return directory;
}

std::string milliseconds(std::int64_t ns) { return std::to_string(ns / 1'000'000) + " ms"; }

std::string what_followed(const ClaimAttempt& attempt) {
  switch (attempt.outcome) {
    case ClaimOutcome::kReady:
      return "served from the cache";
    case ClaimOutcome::kClaimed:
      return "its holder is gone; compiling here";
    case ClaimOutcome::kHolderFinished:
      return "its holder stored no result this compile can use; compiling here";
    case ClaimOutcome::kTimedOut:
      return "timed out (NVRTC_CACHE_WAIT_TIMEOUT); compiling here";
    case ClaimOutcome::kHolderStopped:
      return "its holder is stopped; compiling here";
    case ClaimOutcome::kUnavailable:
      return attempt.problem + "; compiling here";
  }
  return {};
}

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

// The node's claim is held: take the cross-node one, or wait for the node that holds it (at most
// `timeout` in all). Serves the result (kReady, node claim released) if it appears.
void claim_across_nodes(store::remote::TieredStore& tiered, const std::string& name, nanoseconds timeout,
                        const std::function<bool()>& result_ready, ClaimAttempt& attempt) {
  const std::chrono::milliseconds lease = store::remote::kClaimLease;  // renewed while held
  store::remote::RemoteClaim remote = tiered.try_claim(name, lease);
  if (remote.code() != store::remote::ClaimCode::kHeldByOther) {
    attempt.remote = std::move(remote);
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
    remote = tiered.try_claim(name, lease);
    if (remote.code() !=
        store::remote::ClaimCode::kHeldByOther) {  // taken over (the holder finished or died), or failed
      attempt.remote = std::move(remote);
      break;
    }
  }
  attempt.waited = true;
  attempt.wait_ns += std::chrono::duration_cast<nanoseconds>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace

ClaimAttempt claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready) {
  Runtime& runtime = Runtime::instance();
  const core::Config& config = runtime.config();
  const nanoseconds timeout =
      config.wait_timeout ? nanoseconds(*config.wait_timeout) : default_wait_timeout(longest_claim_held());
  if (timeout <= nanoseconds::zero()) return {};  // waiting turned off
  ClaimDirectory* directory = claim_directory();
  if (directory == nullptr || !directory->usable()) return {};

  const std::string name = keying::to_hex(key);
  store::remote::TieredStore* tiered = runtime.tiered_store();
  SharedPolls polls;
  // Every poll looks in the local store; the shared tiers only now and then.
  const std::function<bool()> ready = tiered == nullptr ? result_ready : std::function<bool()>([&] {
    const store::remote::SharedLookups consult(polls.due());
    return result_ready();
  });
  ClaimAttempt attempt = directory->claim_or_wait(name, timeout, ready, [&name] {
    if (core::log_enabled(core::LogLevel::kDebug))
      core::log_line(core::LogLevel::kDebug, "waiting for another compile of " + name);
  });
  if (tiered != nullptr && attempt.outcome == ClaimOutcome::kClaimed) {
    claim_across_nodes(*tiered, name, timeout, result_ready, attempt);
  }
  if (attempt.waited) {
    runtime.stats().add(core::Counter::waited);
    runtime.stats().add(core::Counter::wait_ns, attempt.wait_ns);
    if (core::log_enabled(core::LogLevel::kDebug)) {
      core::log_line(core::LogLevel::kDebug,
                     "waited " + milliseconds(attempt.wait_ns) + " for " + name + ": " + what_followed(attempt));
    }
    if (attempt.outcome == ClaimOutcome::kTimedOut) {
      core::log_once(core::LogLevel::kInfo, "claim-timeout",
                     "waited " + milliseconds(attempt.wait_ns) +
                         " for another compile of the same program; compiling it here (NVRTC_CACHE_WAIT_TIMEOUT)");
    }
  }
  if (attempt.outcome == ClaimOutcome::kUnavailable) {
    core::log_once(core::LogLevel::kInfo, "claim-unavailable",
                   "compiles of one program are not coordinated: " + attempt.problem);
  }
  return attempt;
}

}  // namespace nvrtc_cache::shim
