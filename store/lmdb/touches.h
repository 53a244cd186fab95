// Batched touches: a get() whose entry's recorded access is over a minute old queues the key; the
// queue (at most 1024 keys per process and environment) is written in one best-effort write
// transaction at most every 30 seconds, when it is full, before an eviction and on close. A value
// blob is never rewritten to touch it. So access times are accurate to about a minute and a half.
// Contract: thread-safe (the queue is guarded by SharedEnv::touch_mu, never held across a
// transaction); the caller holds no transaction of its own; never throws except std::bad_alloc.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "store/lmdb/environment_registry.h"
#include "store/lmdb/records.h"

namespace nvrtc_cache::store::lmdb {

// Whether an entry whose access record is `record` (nullopt: none, or malformed) is due a touch.
bool touch_due(const std::optional<AccessRecord>& record, std::int64_t now);

// Queues `key` for a touch; writes the queue when it is full or the last write is old enough.
void note_touch(SharedEnv& env, std::string_view key, std::int64_t now);

// Writes every queued touch now.
void flush_touches(SharedEnv& env, std::int64_t now);

}  // namespace nvrtc_cache::store::lmdb
