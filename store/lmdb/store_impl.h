// LmdbStore::Impl: one LmdbStore's state and operations. Its claim on the process-wide environment
// (acquire, quarantine) is in store_impl.cc, reads in store_reads.cc, writes in store_writes.cc; the
// public wrappers (store/lmdb/lmdb_store.cc) add the errno and exception guards.
// Contract:
//  - Threads: any method may run on any thread; `env` and `closed` are guarded by Registry::mu.
//  - fork: acquire() never hands out an environment of an ancestor process (it opens its own).
//  - Filesystem: the store's directory is reached only through `location.parent`; damage moves it
//    aside (store/cache_directory.h quarantine), never truncates it in place.
//  - Methods may throw std::bad_alloc; every other failure is a Status or an empty result.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "store/counter_file.h"
#include "store/lmdb/databases.h"
#include "store/lmdb/environment_registry.h"
#include "store/lmdb/lmdb_store.h"
#include "store/lmdb/store_location.h"

namespace nvrtc_cache::store {

struct LmdbStore::Impl {
  LmdbOptions options;
  lmdb::StoreLocation location;    // where the store was opened
  lmdb::SharedEnv* env = nullptr;  // one user reference; guarded by the registry mutex
  bool closed = false;             // guarded by the registry mutex
  std::atomic<std::uint64_t> corrupt_dropped{0};
  std::atomic<std::uint64_t> quarantined{0};
  // The cache directory removed under this process (`rm -rf` of the cache): recreated once, at the
  // same path, into `recreated_location` (written once under the registry mutex, never freed while
  // the store lives, so a thread still reading the first location reads a live one).
  std::unique_ptr<lmdb::StoreLocation> recreated_location;
  std::atomic<const lmdb::StoreLocation*> current_location{&location};
  std::atomic<std::uint64_t> recreated{0};

  ~Impl();
  platform::Env& system() const { return *options.env; }
  // Where the store is now: `location`, or the recreated one.
  const lmdb::StoreLocation& where() const { return *current_location.load(std::memory_order_acquire); }

  // ---- The environment (store_impl.cc) ----
  // The environment for this process (reopened after fork, or after damage or replacement), or
  // null with `status` set.
  // `for_put`: the directory's identity is checked now, not at most once a second as for reads, so
  // that a result is never written into a store removed or replaced under the process.
  lmdb::EnvRef acquire(Status* status, bool for_put = false);
  // The environment already open in this process, if any; never opens one.
  lmdb::EnvRef acquire_existing();
  // Writes queued touches and drops this store's reference; later calls fail as closed.
  void release();
  // LMDB reported (or faulted on) damage it cannot repair: move the directory aside, never truncate
  // it in place (other processes have it mapped); they notice the new inode and reopen. This process
  // abandons the environment and opens a fresh store on next use.
  void quarantine_damaged(lmdb::SharedEnv& shared);
  // The directory holding the store was removed (its handle names an unlinked directory): it is
  // created again at its path, checked as the cache directory is (store/cache_directory.h), once
  // per store; true when the store can be opened there. Called under the registry mutex.
  bool recreate_removed_directory(Status* status);
  // Quarantines the store when `rc` says it is damaged; passes `status` on.
  Status damaged_or(Status status, lmdb::SharedEnv& shared, int rc);

  // ---- Reads (store_reads.cc) ----
  std::optional<std::string> get(std::string_view key);
  lmdb::Totals totals();
  bool was_evicted(std::string_view key);
  Counters counters();
  MapUsage map_usage();
  Status for_each(const std::function<void(std::string_view key, std::optional<std::string_view> payload)>& visit);
  Status for_each_entry(const EntryVisitor& visit, bool with_access);
  Status for_each_key_with_prefix(std::string_view prefix, const KeyVisitor& visit);

  // ---- Writes (store_writes.cc) ----
  Status put(std::string_view key, std::string_view value);
  Status erase(std::string_view key);
  Status clear();
  Status add_counters(const Counters& deltas);
  Status evict(const EvictOptions& evict_options, EvictResult* result, const EvictProgress& progress);

 private:
  // Whether the store's directory in its parent is no longer the one `shared` was opened on
  // (checked at most once a second: one fstatat, not following a link).
  bool directory_was_replaced(lmdb::SharedEnv& shared, bool now);
  bool is_open_directory(const lmdb::SharedEnv& shared);
  // Drops an entry whose envelope failed, or quarantines the store (store_reads.cc).
  void drop_if_corrupt(lmdb::SharedEnv& shared, std::string_view key);
};

}  // namespace nvrtc_cache::store
