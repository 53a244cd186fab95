// Batched touches: a get() whose entry's recorded access is over a minute old queues the key; the
// queue (at most 1024 keys per process and environment) is written in one best-effort write
// transaction at most every 30 seconds (counted from the open: a process's first reads write
// nothing), when it is full, with the next non-empty add_counters() (in its transaction), before an
// eviction and on close. A value
// blob is never rewritten to touch it. So access times are accurate to about a minute and a half.
// Contract: thread-safe (the queue is guarded by SharedEnv::touch_mu, never held across a
// transaction); the caller holds no transaction of its own; never throws except std::bad_alloc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "store/lmdb/environment_registry.h"
#include "store/lmdb/records.h"

namespace nvrtc_cache::store::lmdb {

// Whether an entry whose access record is `record` (nullopt: none, or malformed) is due a touch.
bool touch_due(const std::optional<AccessRecord>& record, std::int64_t now);

// Queues `key` for a touch; when `may_write`, writes the queue when it is full or the last write is
// old enough (else the queue waits for a write that carries it).
void note_touch(SharedEnv& env, std::string_view key, std::int64_t now, bool may_write = true);

// Writes every queued touch now.
void flush_touches(SharedEnv& env, std::int64_t now);

// Empties the queue (the flush clock restarts at `now`) and returns what it held.
std::unordered_set<std::string> take_touches(SharedEnv& env, std::int64_t now);

// Inside the caller's write transaction: sets the last access of each key to `now` where the
// recorded one is stale (creating the record for an entry that has none; keys no longer stored are
// skipped); `changed` is set when a record was written. Returns the first LMDB error.
int apply_touches(MDB_txn* txn, SharedEnv& env, const std::unordered_set<std::string>& keys, std::int64_t now,
                  bool* changed);

}  // namespace nvrtc_cache::store::lmdb
