// Eviction: the map size (a growing map's cap: store/lmdb/map_growth.h) is the cap. "Map usage" is
// the pages the databases occupy (the file's high-water mark minus its free pages; the file never
// shrinks, freed pages are reused). When a put leaves the usage above 75% of the cap, least-recently-accessed entries are deleted, in
// transactions of at most 64 entries that re-check each entry (one touched since the scan is kept),
// until the usage is at most 60%. On a full map a put makes room for its value and retries once.
// Contract:
//  - Threads: one evictor at a time per process and environment (SharedEnv::evict_mu, taken here);
//    processes may evict concurrently (each deletion re-checks the goal inside its transaction, so
//    together they do not overshoot). The caller holds no transaction. Never throws except
//    std::bad_alloc (evict_if_over_high_water never throws).
//  - Each pass scans every key once; queued touches are written first (store/lmdb/touches.h).
#pragma once

#include <lmdb.h>

#include <cstdint>

#include "store/lmdb/environment_registry.h"
#include "store/lmdb/lmdb_store.h"

namespace nvrtc_cache::store::lmdb {

// Map usage as seen by `txn` (a write transaction sees its own changes): every page some database
// occupies, plus the two meta pages.
int measure_usage(const SharedEnv& env, MDB_txn* txn, MapUsage* out);

// Above the high water mark: the automatic policy evicts.
bool over_high_water(const MapUsage& usage);

// Evicts as `options` asks (see EvictOptions), waiting for an eviction already running in this
// process; `result` accumulates what was committed.
Status evict(SharedEnv& env, const EvictOptions& options, std::int64_t now, EvictResult* result,
             const EvictProgress& progress = {});

// After MDB_MAP_FULL (or ENOSPC) for a record of `record_bytes` under a key of `key_bytes`: releases
// dead readers' slots, then evicts to 60% and at least twice the record's size, starting with the
// two least recently used entries that occupy as many contiguous pages as the record needs.
void make_room(SharedEnv& env, std::uint64_t map_bytes, std::uint64_t record_bytes, std::uint64_t key_bytes,
               std::int64_t now);

// The automatic policy after a committed put (best effort), skipped when this process is already
// evicting.
void evict_if_over_high_water(SharedEnv& env, std::int64_t now);

}  // namespace nvrtc_cache::store::lmdb
