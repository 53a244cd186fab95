// LmdbStore: the default, persistent, multi-process Store backed by one LMDB environment.
// Contract:
//  - Filesystem: the store lives in a directory (created 0700 if missing) holding data.mdb and
//    lock.mdb. No other file descriptor is ever opened on those files (closing one would drop
//    LMDB's fcntl locks), only stat(). The store holds one O_PATH handle on
//    the directory's parent for its lifetime: every (re)open, identity check and move-aside goes
//    through it, never through the parent's path.
//  - Processes: any number of processes may use the same directory at once; writers serialise.
//  - Threads: thread-safe; read transactions are per call (MDB_NOTLS).
//  - fork: a child never touches the parent's environment; it opens its own on first use (a
//    pthread_atfork child handler bumps a generation; the inherited handle is leaked, never closed).
//  - Integrity: every value is wrapped in an envelope (magic, format version, length, key echo,
//    XXH3-64 checksum) verified on every read; a mismatch is a miss and the entry is dropped.
//  - A failure to open yields a Status; no method aborts or throws, and every method preserves errno.
//  - One MDB_env per process per directory (identified by st_dev/st_ino): every LmdbStore opened on
//    the same directory shares it, and the first open's cap applies. A map size grown by another
//    process (MDB_MAP_RESIZED) is adopted. The map is the cap from the open, or (where
//    LmdbOptions::initial_map_bytes is set: Windows) starts small and is grown by a put that finds
//    it full, up to the cap (store/lmdb/map_growth.h); at the cap a full map is met by eviction.
//  - Accounting: entry_count() and size_bytes() (payload bytes, envelopes and keys not counted) are
//    kept in a "meta" database, updated in the same transaction as each put/erase/clear/eviction, so
//    they are exact across processes. Counters live in the mapped counters file beside data.mdb
//    (store/counter_file.h; added to without a transaction), and, where that file cannot be used or
//    from older versions, in their own "counters" database; counters() sums both.
//  - Size cap and LRU: the map size (a growing map's cap) is the cap. Each entry has a 24-byte access record (database
//    "access": payload size u64, created s64, last access s64, little-endian, seconds of
//    LmdbOptions::env) written in the same transaction as the entry; a value blob is never
//    rewritten to touch it. get() queues a key whose recorded access is over a minute old; queued
//    keys (at most 1024 per process and directory) are written in one transaction at most every
//    30 seconds (counted from the open: a process's first reads write nothing), when the queue is
//    full, with the next non-empty add_counters() (in its transaction), before an eviction and on
//    close(). So access times are accurate to about a minute and a half.
//  - Eviction: "map usage" is the pages the databases occupy (the file's high-water mark minus its
//    free pages; the file itself never shrinks, freed pages are reused). When a put leaves the map
//    usage above 75% of the map size, least-recently-accessed entries are deleted, in transactions
//    of at most 64 entries that re-check each entry (one touched since the scan is kept), until the
//    usage is at most 60%. On MDB_MAP_FULL (which can come below the cap: free pages may be too
//    fragmented for a large value) a put checks for dead readers, evicts (to 60%, and at least
//    twice the value's size, starting with the two least recently used entries that occupy as many
//    contiguous pages as the value needs) and retries once; still full is Status::full. A value
//    above half the map size is refused as full without evicting anything. One evictor at a time
//    per process; processes may evict concurrently (each deletion re-checks the goal inside its
//    transaction, so together they do not overshoot). Eviction scans every key once per pass.
// The implementation's parts are in store/lmdb/ (store/lmdb/store_impl.h says where each lives).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "platform/env.h"
#include "store/lmdb/records.h"
#include "store/store.h"

namespace nvrtc_cache::store {

struct LmdbOptions {
  std::string directory;
  std::uint64_t map_size_bytes = 5ull << 30;  // the cap; the first open in a process applies
  // The map a new store starts with, grown as it fills up to the cap (store/lmdb/map_growth.h);
  // 0: the map is the cap from the start. For Windows, where the data file is as large as the map
  // (platform/file_mapping.h); an existing data file's size is the least the map opens with.
  std::uint64_t initial_map_bytes = 0;
  // Clock for access times, platform::Env::fault_for() for kOpen/kGet/kPut/kErase/kEvict, and the handle-based
  // calls that reach the directory; must outlive the store. The owner/mode checks are the caller's
  // (store/cache_directory.h).
  platform::Env* env = platform::Env::system();
  // A handle on the directory holding `directory` (its last component), already checked by the
  // caller; the store keeps its own duplicate. -1: the parent path is walked and created as
  // store/directory_handle.h describes. Either way `directory` itself is reached from that handle
  // (created 0700, never a link), LMDB is given a path that resolves to that very directory
  // (/proc/self/fd/N, or `directory` where /proc is missing; on Windows its present full path, read
  // from the handle), and an open whose data.mdb is not the
  // one in that directory (it was swapped meanwhile) is refused.
  int parent_directory_fd = -1;
  // A cache its directory's group shares on purpose: the store directory is created
  // kGroupSharedDirectoryMode and its files (data.mdb, lock.mdb) kGroupSharedFileMode, whatever the
  // umask, so every member can open what another created.
  bool group_shared = false;
  // false: a get() never writes; the touches it queues wait for the next add_counters(), put(),
  // eviction or close (for a caller that bounds how long its writes may wait: store/bounded_writes.h).
  bool reads_write_touches = true;
};

// Called after each eviction batch (on the evicting thread): entries examined of the pass's candidates.
using EvictProgress = std::function<void(std::uint64_t examined, std::uint64_t candidates)>;

// What LmdbStore::evict() removes, least recently accessed first. Both may be given.
struct EvictOptions {
  // Evict until size_bytes() (payload bytes, as the "size" of `nvrtc-cache stats`) is at most this.
  std::optional<std::uint64_t> max_bytes;
  // Evict every entry whose recorded last access is at least this many seconds old.
  std::optional<std::int64_t> older_than_seconds;
  // With neither set, evict() applies the automatic policy: down to 60% map usage if above 75%.
};

struct EvictResult {
  std::uint64_t entries = 0;  // entries evicted
  std::uint64_t bytes = 0;    // their payload bytes
};

// Pages in use (as bytes) and the cap: the size of the map, which bounds the data file (a growing
// map's cap; `mapped_bytes` is then its current size).
struct MapUsage {
  std::uint64_t used_bytes = 0;
  std::uint64_t map_bytes = 0;
  std::uint64_t mapped_bytes = 0;
};

class LmdbStore final : public Store {
 public:
  // Opens (creating if needed) the store; on failure `status` says why and the result is null.
  static std::unique_ptr<LmdbStore> open(const LmdbOptions& options, Status* status);
  ~LmdbStore() override;

  std::optional<std::string> get(std::string_view key) override;
  Status put(std::string_view key, std::string_view value) override;
  Status erase(std::string_view key) override;
  std::uint64_t entry_count() override;
  std::uint64_t size_bytes() override;
  Status clear() override;
  void close() override;
  Status add_counters(const Counters& deltas) override;
  Counters counters() override;
  CounterFile* counter_file() override;
  // Among the last 1024 entries evicted (store/lmdb/evicted_keys.h).
  bool was_evicted(std::string_view key) override;

  // Number of entries whose envelope failed verification and were dropped (this process).
  std::uint64_t corrupt_entries_dropped() const override;

  // Evicts as `options` asks (see EvictOptions); `result` (optional) gets what was removed, also
  // when a later batch fails. Waits for an eviction already running in this process.
  Status evict(const EvictOptions& options, EvictResult* result = nullptr, const EvictProgress& progress = {});
  // The current map usage (zeros if the store is unusable).
  MapUsage map_usage();
  // Whether the store was opened read-only (its directory or files are not writable): gets work,
  // writes fail with Status::read_only.
  bool read_only();
  // How many times this process found the store damaged beyond what LMDB reports as a miss (LMDB
  // corruption codes, or a fault while reading mapped pages) and moved its directory aside.
  std::uint64_t stores_quarantined() const override;
  std::uint64_t directories_recreated() const override;

  // Visits every entry in key order, in one read transaction: `payload` is nullopt when the entry
  // fails its envelope check. Reads are guarded like get(); nothing is modified. Returns an error
  // (corruption) when the store cannot be walked to the end.
  Status for_each(const std::function<void(std::string_view key, std::optional<std::string_view> payload)>& visit);

  // The same, with each entry's access record (payload size, created, last access; nullopt when
  // absent or malformed).
  using EntryVisitor = std::function<void(std::string_view key, std::optional<std::string_view> payload,
                                          std::optional<AccessRecord> access)>;
  Status for_each_with_access(const EntryVisitor& visit);

  // Visits the keys that start with `prefix`, in key order, in one read transaction, without reading
  // or checking their values: each key with the stored size of its value (envelope included) and its
  // access record (nullopt when absent or malformed). For a namespace of keys (the C API's entries:
  // api/api_entry.h) that needs its own count, size and least recently used order.
  using KeyVisitor =
      std::function<void(std::string_view key, std::uint64_t stored_bytes, std::optional<AccessRecord> access)>;
  Status for_each_key_with_prefix(std::string_view prefix, const KeyVisitor& visit);

  struct Impl;

 private:
  explicit LmdbStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nvrtc_cache::store
