// The store's named LMDB databases and their rows, read and written inside a caller's transaction:
//   "entries"  key -> enveloped value (store/envelope.h)
//   "access"   key -> access record (store/lmdb/records.h), written with its entry
//   "meta"     "entry_count", "payload_bytes", "last_eviction" -> le64, updated with every change;
//              "evicted_keys" -> the recently evicted keys (store/lmdb/evicted_keys.h)
//   "counters" name -> le64 (two's complement), the shim's statistics
// Contract: every function works within the transaction it is given (no locking of its own; the
// caller's Txn holds what is needed) and returns an LMDB code; values read back are untrusted and
// decoded by store/lmdb/records.h. No filesystem access beyond LMDB's own.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <string_view>

#include "store/lmdb/environment_registry.h"
#include "store/lmdb/records.h"

namespace nvrtc_cache::store::lmdb {

// Opens the named databases into `shared`'s handles. A read-only environment cannot create them:
// they must all exist already. Otherwise they are created on first use; a store that has pages but
// lacks them is damaged (creating them would write to it), not new: MDB_CORRUPTED.
int open_databases(MDB_env* env, SharedEnv& shared);

// Whether LMDB accepts `key` as a key of this environment.
bool is_valid_key(const SharedEnv& env, std::string_view key);

// Entry count and payload bytes, kept in "meta".
struct Totals {
  std::uint64_t entries = 0;
  std::uint64_t payload_bytes = 0;
};
// Absent or malformed numbers read as 0.
Totals read_totals(MDB_txn* txn, MDB_dbi meta);
int write_totals(MDB_txn* txn, MDB_dbi meta, const Totals& totals);
// Records when this process last evicted (a commit that lets the next writer reuse freed pages).
int write_last_eviction(MDB_txn* txn, MDB_dbi meta, std::int64_t now);

// The access record of `key`: MDB_SUCCESS with `*out` set, MDB_NOTFOUND, or an error. A record of
// the wrong size reads as found with every field zero (the oldest possible access).
int read_access(MDB_txn* txn, const SharedEnv& env, std::string_view key, AccessRecord* out);
int write_access(MDB_txn* txn, const SharedEnv& env, std::string_view key, const AccessRecord& record);
// Deletes the access record of `key`; an absent one is not an error.
int delete_access(MDB_txn* txn, const SharedEnv& env, std::string_view key);

// Deletes `key` (whose stored value is `stored`) and its access record, and adjusts the totals.
int delete_entry(MDB_txn* txn, const SharedEnv& env, std::string_view key, const MDB_val& stored);

// Adds `delta` to the counter `name` (absent: 0), wrapping.
int add_counter(MDB_txn* txn, MDB_dbi counters, std::string_view name, std::int64_t delta);

}  // namespace nvrtc_cache::store::lmdb
