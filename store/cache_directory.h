// Opening the cache's store safely: the directory is created 0700 if missing; a directory that is a
// symlink, owned by another user, or writable by group/others is refused (unless the policy allows a
// shared cache); a network or cluster filesystem (NFS, SMB/CIFS, FUSE, 9p, Lustre, GPFS, Ceph, AFS)
// is avoided by falling back to a node-local directory; a data file shorter than the pages its meta
// page claims (a truncated copy, a disk that filled) is caught before LMDB maps it, and the store
// directory is moved aside (never truncated in place) and recreated.
// Contract: filesystem access only through the given Env (LMDB aside); thread-compatible; never
// throws; every message is one line naming the setting involved.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/env.h"
#include "store/lmdb_store.h"
#include "store/status.h"

namespace nvrtc_cache::store {

struct CachePolicy {
  std::string directory;           // the cache directory (the store lives in <directory>/store)
  std::string fallback_directory;  // node-local directory used when `directory` is on a network FS
  std::uint64_t max_bytes = 5ull << 30;
  bool allow_shared = false;       // accept a directory owned by another user or group-writable
  Env* env = Env::system();
};

struct OpenedCache {
  std::unique_ptr<LmdbStore> store;  // null: run without the cache (status says why)
  Status status;
  std::string directory;             // the cache directory in use
  bool read_only = false;            // hits are served, nothing is stored
  std::vector<std::string> messages; // things the user should hear about once (fallbacks, quarantine)
};

OpenedCache open_cache(const CachePolicy& policy);

// Lower-level steps, exposed for tests.
enum class DirectoryVerdict { kUsable, kCannotCreate, kUnsafe, kNetworkFilesystem };
struct DirectoryCheck {
  DirectoryVerdict verdict = DirectoryVerdict::kUsable;
  std::string detail;
};
DirectoryCheck prepare_directory(const std::string& path, bool allow_shared, Env& env);
// Ok, or corruption if <store_dir>/data.mdb is shorter than its meta page says or has no valid meta.
Status check_data_file(const std::string& store_dir, Env& env);
// Renames `store_dir` aside (<store_dir>.corrupt-<seconds>-<pid>); returns the new name or "".
std::string quarantine(const std::string& store_dir, Env& env);

}  // namespace nvrtc_cache::store
