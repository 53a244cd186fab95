// The Linux shim's single-flight (shim/flight/single_flight.h): the Runtime's settings, statistics and
// claims directory, and its shared tiers (NVRTC_CACHE_REMOTE with a tier that supports claims, i.e.
// Redis): the holder of the node's claim also claims the key on the first writable claim-capable
// tier; when a compile on another node holds it, this one waits (polling the shared tiers every
// 50 ms, backing off to 200 ms) for that result, or for the claim to go (a dead holder's lease
// expires), within the same timeout, and then compiles itself. While waiting for a node-local
// holder, the shared tiers are consulted with the same backoff, the local store at every poll.
// Contract: as shim/flight/single_flight.h's; uses Runtime (the cache directory of the open store).
#pragma once

#include <functional>

#include "keying/cache_key.h"
#include "shim/flight/claim_file.h"

namespace nvrtc_cache::shim {

// Claims `key` for the caller's compile, or waits until result_ready() (a fresh look-up) finds the
// result another compile stored. The returned claim, when held, must live until the result is
// stored. Counts `waited` and `wait_ns` in the Runtime's statistics.
ClaimAttempt claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready);

}  // namespace nvrtc_cache::shim
