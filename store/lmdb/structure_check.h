// The structure check: what LMDB trusts when it writes, verified once per process and environment
// before the first write, and the check of one value's overflow pages before it is dropped.
// Everything here reads mapped pages under the fault guard (platform/fault_guard.h); the layouts
// checked are LMDB 0.9's (store/lmdb/page_layout.h).
// Contract: thread-safe (one verification per environment, under SharedEnv::verify_mu; later calls
// read the cached verdict); no filesystem access beyond LMDB's own reads; never throws.
#pragma once

#include <lmdb.h>

#include <cstdint>

#include "store/lmdb/environment_registry.h"

namespace nvrtc_cache::store::lmdb {

// Whether every B-tree can be walked to the end, every free-list record is a well-formed ID list
// (count, then strictly descending page numbers within the file) and every large value's overflow
// header is intact. A damaged verdict also marks `env` damaged (the next acquire quarantines it).
bool structure_verified(SharedEnv& env);

// Whether `value` (as LMDB returned it) is stored on overflow pages whose page header is intact:
// damage found in its bytes is then confined to those pages, and deleting it frees exactly them.
bool on_intact_overflow_pages(const MDB_val& value, std::uint64_t page_size);

}  // namespace nvrtc_cache::store::lmdb
