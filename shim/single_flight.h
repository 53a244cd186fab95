// Single-flight: the first compile of a program on this node holds a claim on its direct key while
// it compiles and stores; other compiles of the same program, in this process or another, wait for
// that result and are served from the cache (shim/claim_file.h has the protocol). A waiter whose
// holder died takes the claim over; a waiter whose wait times out (NVRTC_CACHE_WAIT_TIMEOUT)
// compiles unclaimed. Only compiles that are cacheable and missed come here.
// Across nodes (NVRTC_CACHE_REMOTE with a tier that supports claims, i.e. Redis): the holder of the
// node's claim also claims the key on the first writable claim-capable tier; when a compile on
// another node holds it, this one waits (polling the shared tiers every 50 ms, backing off to
// 200 ms) for that result, or for the claim to go (a dead holder's lease expires), within the same
// timeout, and then compiles itself. While waiting for a node-local holder, the shared tiers are
// consulted with the same backoff, the local store at every poll.
// Contract: thread-safe; uses Runtime (settings, statistics, and the cache directory of the open
// store); throws only std::bad_alloc or what result_ready() throws; preserves errno; fails open: claims that
// cannot be used are logged once (info) and the compile goes ahead unclaimed.
#pragma once

#include <functional>

#include "keying/cache_key.h"
#include "shim/claim_file.h"

namespace nvrtc_cache::shim {

// Claims `key` for the caller's compile, or waits until result_ready() (a fresh look-up) finds the
// result another compile stored. The returned claim, when held, must live until the result is
// stored. Counts `waited` and `wait_ns`.
ClaimAttempt claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready);

}  // namespace nvrtc_cache::shim
