// Store: the byte-level cache interface every backend implements (shaped like cuda.core's
// ProgramCacheResource). Keys and values are opaque bytes; a string key is its UTF-8 bytes.
// Contract: every method is thread-safe and never throws; a failure is reported as a Status or as a
// miss, never as an abort. get() is the only lookup (no separate contains). A value that fails its
// integrity check is a miss and is dropped. Counters are named 64-bit integers kept beside the
// entries so that statistics can be shared by every process that uses the same store.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "store/status.h"

namespace nvrtc_cache::store {

class CounterFile;

using Counters = std::map<std::string, std::int64_t, std::less<>>;

// The first byte of a key names its kind (direct/manifest.h); the store itself tells only the index
// apart: a manifest (direct::kManifestPrefix), which names results rather than being one (the shared
// tiers count its hits apart).
inline constexpr char kIndexKeyPrefix = 'M';

class Store {
 public:
  virtual ~Store() = default;

  // The value stored under `key`, or nothing (absent, corrupt, or the store is unusable).
  virtual std::optional<std::string> get(std::string_view key) = 0;
  // Stores `value` under `key`, replacing any previous value.
  virtual Status put(std::string_view key, std::string_view value) = 0;
  // The same in this node's store only (a hint no other node needs): never sent to a shared tier.
  virtual Status put_local(std::string_view key, std::string_view value) { return put(key, value); }
  // Removes `key`; erasing an absent key is not an error.
  virtual Status erase(std::string_view key) = 0;
  // Number of entries and the bytes their values occupy.
  virtual std::uint64_t entry_count() = 0;
  virtual std::uint64_t size_bytes() = 0;
  // Removes every entry and resets the counters.
  virtual Status clear() = 0;
  // Releases resources; every later call is a miss or an error.
  virtual void close() = 0;

  // Adds each delta to its named counter atomically (one transaction for all of them).
  virtual Status add_counters(const Counters& deltas) = 0;
  // A snapshot of all counters.
  virtual Counters counters() = 0;
  // The mapped counters file add_counters() adds to, where the store has one: counts made through
  // its cells survive any exit of the process (store/counter_file.h).
  virtual CounterFile* counter_file() { return nullptr; }

  // Whether `key` is among the entries this store evicted lately (a bounded record, for the miss
  // reason: store/lmdb/evicted_keys.h); false where the store keeps no such record.
  virtual bool was_evicted(std::string_view key) {
    (void)key;
    return false;
  }

  // Values that failed their integrity check and were dropped, by this process (monotonic).
  virtual std::uint64_t corrupt_entries_dropped() const { return 0; }
  // Times this process found the whole store damaged and moved it aside (monotonic).
  virtual std::uint64_t stores_quarantined() const { return 0; }
  // How many times the cache directory, removed under this process, was created again for the store.
  virtual std::uint64_t directories_recreated() const { return 0; }
};

}  // namespace nvrtc_cache::store
