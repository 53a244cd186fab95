// Opening the cache's store safely: the directory is reached by handle (store/directory_handle.h:
// created 0700 where missing, no link followed unless root or the user owns it, the directory itself
// never a link) and every check below is made on that handle; a directory owned by another user or
// writable by group/others is refused (unless the policy allows a shared cache); a network or
// cluster filesystem (NFS, SMB/CIFS, FUSE, 9p, Lustre, GPFS, Ceph, AFS) is avoided by falling back to
// a node-local directory; the store is opened through the checked handle and refused if LMDB's files
// are not in it (store/lmdb/lmdb_store.h). A data file shorter than the pages its meta page claims (a
// truncated copy, a disk that filled) is caught before LMDB maps it, and the store directory is
// moved aside (never truncated in place, named store.corrupt-<seconds>-<pid>-<n>) and recreated; only
// the newest kMovedAsideKept moved-aside stores are kept.
// Contract: filesystem access only through the given Env (LMDB aside); thread-compatible; several
// processes may open, move aside and prune at once; never throws; every message is one line naming
// the setting involved.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/directory_handle.h"
#include "platform/env.h"
#include "store/lmdb/lmdb_store.h"
#include "store/status.h"

namespace nvrtc_cache::store {

struct CachePolicy {
  std::string directory;           // the cache directory (the store lives in <directory>/store)
  std::string fallback_directory;  // node-local directory used when `directory` is on a network FS
  std::uint64_t max_bytes = 5ull << 30;
  // Accept a directory owned by another user or group-writable, and create what is missing usable
  // by the directory's group (kGroupSharedDirectoryMode, kGroupSharedFileMode).
  bool allow_shared = false;
  // false: reads never write (store/lmdb/lmdb_store.h, LmdbOptions::reads_write_touches).
  bool reads_write_touches = true;
  platform::Env* env = platform::Env::system();
};

struct OpenedCache {
  std::unique_ptr<LmdbStore> store;  // null: run without the cache (status says why)
  Status status;
  std::string directory;              // the cache directory in use
  bool read_only = false;             // hits are served, nothing is stored
  std::vector<std::string> messages;  // things the user should hear about once (fallbacks, quarantine)
};

OpenedCache open_cache(const CachePolicy& policy);

// How many moved-aside stores (directories named store.corrupt-*) `cache_directory` holds; 0 when it
// cannot be opened.
std::size_t moved_aside_stores(const std::string& cache_directory, platform::Env& env = *platform::Env::system());

// Lower-level steps, exposed for tests.
constexpr std::size_t kMovedAsideKept = 2;
enum class DirectoryVerdict { kUsable, kCannotCreate, kUnsafe, kNetworkFilesystem };
struct DirectoryCheck {
  DirectoryVerdict verdict = DirectoryVerdict::kUsable;
  std::string detail;
  DirectoryHandle handle;  // the checked directory (kUsable and kNetworkFilesystem)
  DirectoryHandle store;   // its store/ subdirectory, checked with it, where there is one (kUsable)
};
DirectoryCheck prepare_directory(const std::string& path, bool allow_shared, platform::Env& env);
// Ok, or corruption if data.mdb in `store` is shorter than its meta page says or has no valid meta;
// `shown` names the store directory in messages.
Status check_data_file(const DirectoryHandle& store, const std::string& shown, platform::Env& env);
Status check_data_file(const std::string& store_dir, platform::Env& env);  // the same, by path (tests)
// Renames `name` in `parent` aside (<name>.corrupt-<seconds>-<pid>-<n>), then removes the older
// moved-aside copies of it beyond the newest kMovedAsideKept (by handle, never following a link;
// what another process removed first is skipped); returns the new name, or "" if it could not be
// renamed.
std::string quarantine(const DirectoryHandle& parent, const std::string& name, platform::Env& env);
// Removes the moved-aside copies of `name` in `parent` beyond the newest kMovedAsideKept (the part of
// quarantine() after the rename; safe to run in several processes at once).
void prune_moved_aside(const DirectoryHandle& parent, const std::string& name, platform::Env& env);
// The moved-aside copies of `name` in `parent`.
std::size_t count_moved_aside(const DirectoryHandle& parent, const std::string& name, platform::Env& env);

}  // namespace nvrtc_cache::store
