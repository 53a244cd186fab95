// The process-wide registry of open LMDB environments: one MDB_env per process per directory
// (identified by st_dev/st_ino), shared by every LmdbStore opened on it, with the fork handling.
// Contract:
//  - Threads: the registry, and each SharedEnv's `users`, are guarded by Registry::mu; the rest of
//    a SharedEnv is documented per member. Thread-safe.
//  - fork: Registry::mu is ForkRank::kStoreRegistry of the fork order (platform/fork_locks.h), held
//    across fork() so that a child never inherits it locked. A child moves to a new generation:
//    every environment opened before the fork is then foreign to it (never used, never closed:
//    leaked, the ancestor still owns its mapping, descriptors and locks); it opens its own.
//  - Filesystem: LMDB opens by path, so it is given one that resolves to the checked directory
//    (platform::path_naming_directory: /proc/self/fd/N; on Windows the directory's present full path,
//    read from its handle and read again after the open), and what it opened is compared with that
//    directory afterwards (on Windows by the data file's present full path and its file index, with no
//    query of the volume's serial number: the full path names the volume). No other
//    descriptor is ever opened on data.mdb or lock.mdb (closing one would drop LMDB's fcntl locks).
//  - An environment abandoned as damaged (or replaced by another process) is kept, never closed,
//    since other threads may still be reading its mapping.
#pragma once

#include <lmdb.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "store/counter_file.h"
#include "store/lmdb/lmdb_store.h"
#include "store/lmdb/store_location.h"
#include "store/lmdb/watched_mappings.h"

namespace nvrtc_cache::store::lmdb {

// This process's generation: incremented in every forked child.
std::uint64_t current_fork_generation();

// One open LMDB environment, shared by every LmdbStore of this process on the same directory.
struct SharedEnv {
  MDB_env* env = nullptr;
  MDB_dbi entries = 0;
  MDB_dbi counters = 0;
  MDB_dbi meta = 0;
  MDB_dbi access = 0;
  std::uint64_t page_size = 4096;
  // LmdbOptions::map_size_bytes of the open: the map grows up to it (store/lmdb/map_growth.h).
  std::uint64_t cap_bytes = 0;
  DirectoryId id;
  std::uint64_t generation = current_fork_generation();
  pid_t pid = ::getpid();
  std::size_t users = 0;  // guarded by Registry::mu
  // Shared by every transaction of this process; exclusive to grow the map or adopt another
  // process's map size.
  std::shared_mutex remap_mu;
  // Held by the one evictor of this process (never while a transaction of the thread is open).
  std::mutex evict_mu;
  // Keys read whose access record is stale, written in batches (store/lmdb/touches.h).
  std::mutex touch_mu;
  std::unordered_set<std::string> pending_touches;  // guarded by touch_mu
  std::int64_t last_touch_flush = 0;                // guarded by touch_mu; clock of the flusher
  bool read_only = false;                           // opened MDB_RDONLY: the directory or files are not writable
  // The statistics file beside data.mdb (store/counter_file.h), opened with the environment when it
  // is writable; null otherwise or when the file cannot be used (counters then go to `counters`).
  std::unique_ptr<CounterFile> counter_file;
  // Set when the store was found damaged (and moved aside) or replaced by another process: the
  // environment is never used again, and leaked rather than closed under other threads.
  std::atomic<bool> abandoned{false};
  std::atomic<bool> damaged{false};  // a write path met damage; the next acquire quarantines
  std::mutex verify_mu;
  std::atomic<int> verified{0};  // 0 not yet, 1 sound, -1 damaged (store/lmdb/structure_check.h)
  std::atomic<std::int64_t> identity_checked_at{0};
  // lmdb_mappings_lost() before the environment was opened: a mapping lost since (a neighbour
  // truncated lock.mdb or data.mdb, store/lmdb/watched_mappings.h) loses the environment.
  std::uint64_t mappings_lost_before = lmdb_mappings_lost();

  // Opened by this process, in its current generation, not abandoned and not lost.
  bool belongs_to_this_process() const;
  // A mapping of this process's LMDB was lost to a fault since this environment opened: it reads
  // private zero pages where the files were, and its lock table is no longer shared.
  bool lost() const { return lmdb_mappings_lost() != mappings_lost_before; }
};

// Owns the map from directory identity to the live environment. Everything is guarded by `mu`.
class Registry {
 public:
  // Leaked on purpose: other threads may still use stores while static destructors run.
  static Registry& instance();

  // Returns the environment for the store at `location` with one more user, opening it if needed.
  SharedEnv* acquire_locked(const LmdbOptions& options, const StoreLocation& location, Status* status);
  // Drops one user; the last one closes the environment (or leaks it if inherited across fork).
  void release_locked(SharedEnv* env);

  std::mutex mu;

 private:
  SharedEnv* open_locked(const LmdbOptions& options, const StoreLocation& location, const DirectoryHandle& directory,
                         const DirectoryId& id, Status* status);

  // The environment in use for each directory; an entry inherited across fork is replaced on the
  // next open and erased when its last user goes.
  std::map<DirectoryId, SharedEnv*> live_;
  // Environments abandoned as damaged in this process: kept, never closed (a few KiB each).
  std::vector<SharedEnv*> abandoned_;
};

// A counted reference to a SharedEnv for the duration of one operation; releasing it takes
// Registry::mu.
class EnvRef {
 public:
  EnvRef() = default;
  explicit EnvRef(SharedEnv* env) : env_(env) {}
  EnvRef(const EnvRef&) = delete;
  EnvRef& operator=(const EnvRef&) = delete;
  ~EnvRef();

  explicit operator bool() const { return env_ != nullptr; }
  SharedEnv& operator*() const { return *env_; }
  SharedEnv* operator->() const { return env_; }

 private:
  SharedEnv* env_ = nullptr;
};

}  // namespace nvrtc_cache::store::lmdb
