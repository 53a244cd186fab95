#include "shim/flight/single_flight.h"

#include <memory>
#include <string>
#include <utility>

#include "core/log.h"

namespace nvrtc_cache::shim {
namespace {

using std::chrono::nanoseconds;

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

// A node-local claim (and the cross-node one it may hold), released when the compile returns.
class HeldClaimAttempt final : public HeldClaim {
 public:
  explicit HeldClaimAttempt(ClaimAttempt attempt) : attempt_(std::move(attempt)) {}

 private:
  ClaimAttempt attempt_;
};

// The claims directory of the cache directory in use, made on the first call and kept for the
// process; nullptr when `cache_directory` is empty (no store).
ClaimDirectory* node_claims(const std::string& cache_directory, bool shared) {
  static ClaimDirectory* directory = [&]() -> ClaimDirectory* {
    if (cache_directory.empty()) return nullptr;
    auto* d = new ClaimDirectory(cache_directory + "/claims", shared);  // leaked
    if (!d->usable())
      core::log_line(core::LogLevel::kInfo, "compiles of one program are not coordinated: " + d->problem());
    return d;
  }();
  return directory;
}

}  // namespace

ClaimAttempt claim_or_wait(const FlightSettings& settings, const keying::CacheKey& key,
                           const std::function<bool()>& result_ready) {
  const nanoseconds timeout =
      settings.wait_timeout ? nanoseconds(*settings.wait_timeout) : default_wait_timeout(longest_claim_held());
  if (timeout <= nanoseconds::zero()) return {};  // waiting turned off
  ClaimDirectory* directory = node_claims(settings.cache_directory, settings.shared);
  if (directory == nullptr || !directory->usable()) return {};

  const std::string name = keying::to_hex(key);
  const std::function<bool()> ready = settings.tiers ? settings.tiers->polling(result_ready) : result_ready;
  ClaimAttempt attempt = directory->claim_or_wait(name, timeout, ready, [&name] {
    if (core::log_enabled(core::LogLevel::kDebug))
      core::log_line(core::LogLevel::kDebug, "waiting for another compile of " + name);
  });
  if (settings.tiers != nullptr && attempt.outcome == ClaimOutcome::kClaimed) {
    settings.tiers->claim_across_nodes(name, timeout, result_ready, attempt);
  }
  if (attempt.waited && settings.stats != nullptr) {
    settings.stats->add(core::Counter::waited);
    settings.stats->add(core::Counter::wait_ns, attempt.wait_ns);
  }
  if (attempt.waited) {
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

Flight as_flight(ClaimAttempt attempt) {
  Flight flight;
  flight.wait_ns = attempt.wait_ns;
  flight.held = std::make_unique<HeldClaimAttempt>(std::move(attempt));
  return flight;
}

}  // namespace nvrtc_cache::shim
