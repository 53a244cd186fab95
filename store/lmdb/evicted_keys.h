// The recently evicted keys: a bounded record of which entries eviction removed, so that the next
// miss of one can say its result was evicted (not new). Kept in the "meta" database under
// "evicted_keys", written in the eviction's own transactions: a ring of the XXH3-64 hashes of the
// last kEvictedKeySlots keys evicted (any process, automatic or asked for), 8 KiB whatever the store's size.
// Layout (little-endian): u64 keys written so far, then kEvictedKeySlots u64 hashes (0: empty slot).
// Contract: a pure codec and two functions inside a caller's transaction; the record read back is
// untrusted: one of any other size reads as empty (and is replaced by the next eviction). A hash
// collision can make a miss say "evicted" wrongly (about one in 2^54 per miss). In
// nvrtc_cache::store::lmdb; no filesystem access beyond LMDB's own; never throws except std::bad_alloc.
#pragma once

#include <lmdb.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace nvrtc_cache::store::lmdb {

inline constexpr std::size_t kEvictedKeySlots = 1024;
inline constexpr std::size_t kEvictedKeysRecordSize = 8 + kEvictedKeySlots * 8;

struct EvictedKeys {
  std::uint64_t written = 0;  // the next slot is written % kEvictedKeySlots
  std::array<std::uint64_t, kEvictedKeySlots> hashes{};

  void add(std::string_view key);
  bool contains(std::string_view key) const;
};

void encode_evicted_keys(const EvictedKeys& keys, char* out);  // writes kEvictedKeysRecordSize bytes
std::optional<EvictedKeys> decode_evicted_keys(std::string_view bytes);

// Adds `keys` to the record in `meta`, inside the caller's write transaction.
int remember_evicted(MDB_txn* txn, MDB_dbi meta, const std::vector<std::string>& keys);
// Whether `key` is in the record (false when there is none or it is malformed). Reads a mapped page:
// the caller runs it under the fault guard.
bool was_evicted(MDB_txn* txn, MDB_dbi meta, std::string_view key);
// Empties the record (the store was cleared), inside the caller's write transaction.
int forget_evicted(MDB_txn* txn, MDB_dbi meta);

}  // namespace nvrtc_cache::store::lmdb
