// Single-flight: the first compile of a program on this node holds a claim on its direct key while
// it compiles and stores; other compiles of the same program, in this process or another, wait for
// that result and are served from the cache (shim/flight/claim_file.h has the protocol). A waiter whose
// holder died takes the claim over; a waiter whose wait times out (NVRTC_CACHE_WAIT_TIMEOUT)
// compiles unclaimed. Only compiles that are cacheable and missed come here. The same code serves
// the Linux shim (shim/flight/runtime_flight.h: its Runtime, with shared tiers) and the Windows proxy
// (shim/windows/windows_host.cc).
// Across nodes (where the platform has shared tiers: SharedTierFlight): the holder of the node's
// claim also claims the key on the shared tiers; while it waits for a node-local holder, the shared
// tiers are consulted now and then, the local store at every poll.
// Contract: thread-safe; throws only std::bad_alloc or what result_ready() throws; preserves errno
// (and the last-error value); fails open: claims that cannot be used are logged once (info) and the
// compile goes ahead unclaimed. Counts `waited` and `wait_ns` in the given statistics.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "core/stats.h"
#include "keying/cache_key.h"
#include "shim/flight/claim_file.h"
#include "shim/lifecycle/jit_host.h"

namespace nvrtc_cache::shim {

// Cross-node single-flight on the shared tiers, one object per claim_or_wait() call.
class SharedTierFlight {
 public:
  virtual ~SharedTierFlight() = default;
  // `result_ready` as the node-local wait polls it (some polls also consult the shared tiers).
  virtual std::function<bool()> polling(const std::function<bool()>& result_ready) = 0;
  // The node's claim is held: take the cross-node one (into `attempt.across`), or wait for the node
  // that holds it (at most `timeout` in all); serves the result (kReady, node claim released) if it
  // appears.
  virtual void claim_across_nodes(const std::string& name, std::chrono::nanoseconds timeout,
                                  const std::function<bool()>& result_ready, ClaimAttempt& attempt) = 0;
};

// What a process's runtime gives single-flight.
struct FlightSettings {
  std::string cache_directory;  // of the open store (its claims: <cache dir>/claims); empty: none
  bool shared = false;          // a cache shared by a group on purpose (NVRTC_CACHE_SHARED)
  std::optional<std::chrono::milliseconds> wait_timeout;  // NVRTC_CACHE_WAIT_TIMEOUT (unset: adaptive)
  core::StatsDeltas* stats = nullptr;
  SharedTierFlight* tiers = nullptr;  // none: node-local only
};

// Claims `key` for the caller's compile, or waits until result_ready() (a fresh look-up) finds the
// result another compile stored. The returned claim, when held, must live until the result is
// stored. The claims directory is opened by the first call that waits (and kept for the process:
// the cache directory of a process does not change); an unusable one is logged once.
ClaimAttempt claim_or_wait(const FlightSettings& settings, const keying::CacheKey& key,
                           const std::function<bool()>& result_ready);

// The lifecycle's view of an attempt: its wait, and the claim (if held) released when the compile
// returns.
Flight as_flight(ClaimAttempt attempt);

}  // namespace nvrtc_cache::shim
