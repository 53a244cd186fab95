#include "shim/single_flight.h"

#include <string>

#include "core/log.h"
#include "shim/runtime.h"

namespace nvrtc_cache::shim {
namespace {

using std::chrono::nanoseconds;

// The claims of the cache directory in use, or nullptr when the store is not open.
ClaimDirectory* claim_directory() {
  static ClaimDirectory* directory = []() -> ClaimDirectory* {
    Runtime& runtime = Runtime::instance();
    if (runtime.cache_directory().empty()) return nullptr;
    auto* d = new ClaimDirectory(runtime.cache_directory() + "/claims", runtime.config().shared);  // leaked
    if (!d->usable()) core::log_line(core::LogLevel::kInfo, "compiles of one program are not coordinated: " + d->problem());
    return d;
  }();
  return directory;
}

std::string milliseconds(std::int64_t ns) { return std::to_string(ns / 1'000'000) + " ms"; }

std::string what_followed(const ClaimAttempt& attempt) {
  switch (attempt.outcome) {
    case ClaimOutcome::kReady: return "served from the cache";
    case ClaimOutcome::kClaimed: return "its holder is gone; compiling here";
    case ClaimOutcome::kHolderFinished: return "its holder stored no result this compile can use; compiling here";
    case ClaimOutcome::kTimedOut: return "timed out (NVRTC_CACHE_WAIT_TIMEOUT); compiling here";
    case ClaimOutcome::kUnavailable: return attempt.problem + "; compiling here";
  }
  return {};
}

}  // namespace

ClaimAttempt claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready) {
  Runtime& runtime = Runtime::instance();
  const core::Config& config = runtime.config();
  const nanoseconds timeout = config.wait_timeout ? nanoseconds(*config.wait_timeout)
                                                  : default_wait_timeout(longest_claim_held());
  if (timeout <= nanoseconds::zero()) return {};  // waiting turned off
  ClaimDirectory* directory = claim_directory();
  if (directory == nullptr || !directory->usable()) return {};

  const std::string name = keying::to_hex(key);
  ClaimAttempt attempt = directory->claim_or_wait(name, timeout, result_ready, [&name] {
    if (core::log_enabled(core::LogLevel::kDebug)) core::log_line(core::LogLevel::kDebug, "waiting for another compile of " + name);
  });
  if (attempt.waited) {
    runtime.stats().add(core::Counter::waited);
    runtime.stats().add(core::Counter::wait_ns, attempt.wait_ns);
    if (core::log_enabled(core::LogLevel::kDebug)) {
      core::log_line(core::LogLevel::kDebug, "waited " + milliseconds(attempt.wait_ns) + " for " + name + ": " + what_followed(attempt));
    }
    if (attempt.outcome == ClaimOutcome::kTimedOut) {
      core::log_once(core::LogLevel::kInfo, "claim-timeout",
               "waited " + milliseconds(attempt.wait_ns) +
                   " for another compile of the same program; compiling it here (NVRTC_CACHE_WAIT_TIMEOUT)");
    }
  }
  if (attempt.outcome == ClaimOutcome::kUnavailable) {
    core::log_once(core::LogLevel::kInfo, "claim-unavailable", "compiles of one program are not coordinated: " + attempt.problem);
  }
  return attempt;
}

}  // namespace nvrtc_cache::shim
