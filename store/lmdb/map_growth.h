// Map growth: a store whose map starts below its cap (LmdbOptions::initial_map_bytes; on Windows,
// where mapping data.mdb makes the file as large as the map: platform/file_mapping.h) grows the map,
// never past the cap, when a write finds it full. The data file is then never larger than the
// store's pages plus one growth step (a quarter of the map, at least 1 MiB, at most 64 MiB).
// Contract:
//  - Threads: grow_map() takes the environment's remap lock exclusively, so it waits until no
//    transaction of this process is open (LMDB's rule for mdb_env_set_mapsize on an open
//    environment); the calling thread must hold no transaction. Other processes adopt the larger map
//    when they meet it (MDB_MAP_RESIZED, store/lmdb/transaction.h, or their own full map).
//  - Filesystem: the map is never set below data.mdb's current size (on Windows that would truncate
//    a file another process has mapped, which Windows refuses); the size is read from LMDB's own
//    file handle, never a new one.
//  - A growth LMDB refuses restores the previous map; if even that fails the environment is
//    abandoned (never used again; the next operation opens a fresh one). Never throws.
#pragma once

#include <lmdb.h>

#include <cstdint>

#include "store/lmdb/environment_registry.h"
#include "store/lmdb/lmdb_store.h"

namespace nvrtc_cache::store::lmdb {

// The smallest growth step, and the map a growing store starts with.
inline constexpr std::uint64_t kMapGrowthStepBytes = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kMaxMapGrowthStepBytes = std::uint64_t{64} << 20;

// The map size to open with: the cap, or for a growing store its initial map, never below
// `existing_file_bytes` (data.mdb's size before the open; 0 when there is none).
std::uint64_t map_bytes_at_open(const LmdbOptions& options, std::uint64_t existing_file_bytes);

// The map size a growing map steps to from `current` to fit `record_bytes` more: current plus a
// step, rounded up to a step, at most `cap` (pure; exposed for the tests).
std::uint64_t next_map_bytes(std::uint64_t current, std::uint64_t record_bytes, std::uint64_t cap);

// The cap eviction works against: the configured cap, or the map when it is larger (a map grown by
// another process with a larger cap, adopted: the first open's cap does not shrink it).
std::uint64_t cap_bytes(const SharedEnv& env, std::uint64_t map_bytes);

// Grows the map of `env` so that a record of `record_bytes` fits; false when it is at its cap
// already, read-only, or LMDB refused. Costs an exclusive lock: callers first check that the map
// they saw is below the cap (never so where the map starts at the cap: Linux).
bool grow_map(SharedEnv& env, std::uint64_t record_bytes);

}  // namespace nvrtc_cache::store::lmdb
