// LmdbStore: the default, persistent, multi-process Store backed by one LMDB environment.
// Contract:
//  - Filesystem: the store lives in a directory (created 0700 if missing) holding data.mdb and
//    lock.mdb; the map size is fixed at open. No other file descriptor is ever opened on those files
//    (closing one would drop LMDB's fcntl locks), only stat().
//  - Processes: any number of processes may use the same directory at once; writers serialise.
//  - Threads: thread-safe; read transactions are per call (MDB_NOTLS).
//  - fork: a child never touches the parent's environment; it opens its own on first use (a
//    pthread_atfork child handler bumps a generation; the inherited handle is leaked, never closed).
//  - Integrity: every value is wrapped in an envelope (magic, format version, length, key echo,
//    XXH3-64 checksum) verified on every read; a mismatch is a miss and the entry is dropped.
//  - A failure to open yields a Status; no method aborts or throws, and every method preserves errno.
//  - One MDB_env per process per directory (identified by st_dev/st_ino): every LmdbStore opened on
//    the same directory shares it, and the first open's map size applies. A map size grown by
//    another process (MDB_MAP_RESIZED) is adopted; this process never grows the map: MDB_MAP_FULL
//    is reported as Status::full.
//  - Accounting: entry_count() and size_bytes() (payload bytes, envelopes and keys not counted) are
//    kept in a "meta" database, updated in the same transaction as each put/erase/clear, so they
//    are exact across processes. Counters live in their own "counters" database.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "store/store.h"

namespace nvrtc_cache::store {

struct LmdbOptions {
  std::string directory;
  std::uint64_t map_size_bytes = 5ull << 30;
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

  // Number of entries whose envelope failed verification and were dropped (this process).
  std::uint64_t corrupt_entries_dropped() const override;

  struct Impl;

 private:
  explicit LmdbStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nvrtc_cache::store
