// Single-flight: the first compile of a program on this node holds a claim on its direct key while
// it compiles and stores; other compiles of the same program, in this process or another, wait for
// that result and are served from the cache (shim/claim_file.h has the protocol). A waiter whose
// holder died takes the claim over; a waiter whose wait times out (NVRTC_CACHE_WAIT_TIMEOUT)
// compiles unclaimed. Only compiles that are cacheable and missed come here.
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
