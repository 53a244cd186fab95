// Compaction: rewrites a store's data.mdb without its free pages, so that the file shrinks (LMDB's
// files never shrink by themselves: freed pages are only reused). Used by `clear --compact` and
// `evict --compact`.
// How, and why it is safe: LMDB keeps, for every process that has the environment open, a shared
// fcntl lock on the first byte of lock.mdb (and a new opener first tries an exclusive one, then waits
// for a shared one). Compaction takes that byte exclusively: it fails at once when any other process
// has the cache open (compaction is then refused, naming one such process), and while it is held a
// process opening the cache waits. Holding it, the environment is copied with MDB_CP_COMPACT into a
// new file beside data.mdb (mode and group of the old one), which is synced and renamed over
// data.mdb; only then is the lock released, and the next opener maps the new file. LMDB's own open
// of the environment briefly turns the exclusive lock into a shared one: if another process opened
// the cache in that moment, compaction is abandoned (nothing replaced).
// Contract: the calling process must not have this store open (close every LmdbStore on it first):
// a descriptor is opened and closed on lock.mdb, which would drop the fcntl locks of an environment
// this process had open. Never throws except std::bad_alloc; single-threaded. On Windows
// (compact_windows.cc) nothing is compacted: the problem says so.
#pragma once

#include <cstdint>
#include <string>

namespace nvrtc_cache::tools {

struct Compaction {
  bool done = false;                                // data.mdb was replaced by its compacted copy
  std::string problem;                              // why not ("" when done or when there was nothing to compact)
  std::uint64_t bytes_before = 0, bytes_after = 0;  // data.mdb's size
};

// Compacts the store in `store_directory` (the directory holding data.mdb and lock.mdb).
Compaction compact_store(const std::string& store_directory);

}  // namespace nvrtc_cache::tools
