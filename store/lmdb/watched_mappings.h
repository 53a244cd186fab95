// LMDB's file mappings, watched: LMDB (built from source into the cache, CMakeLists.txt) maps its
// lock file (the reader table and the writer's mutex, read and written through a shared mapping)
// and data.mdb through the functions here, which register each file mapping with the fault handler
// (platform::watch_mapping). Another process truncating either file (a member of a shared cache, a
// damaged disk) then no longer kills this one at its next transaction, read or write, on whatever
// thread: the faulting mapping becomes private zero pages and `lmdb_mappings_lost()` grows. Every
// environment of this process opened before that is then lost (SharedEnv): its transactions begin
// nothing and commit nothing, and it is leaked, never closed; the next operation opens the store
// anew, or fails open to the real library if the files are still unusable.
// Contract: thread-safe and async-signal-safe (a lock-free counter). fork: a child keeps the count
// and the watched mappings it inherits. Windows: a mapped file cannot be truncated there; nothing is
// watched and the count stays 0. With LMDB loaded at run time from the distribution's shared
// library (no source at build time) its mappings are not watched (docs/limits.md).
#pragma once

#include <cstdint>

namespace nvrtc_cache::store::lmdb {

// How many of LMDB's mappings this process has lost to a fault (monotonic).
std::uint64_t lmdb_mappings_lost();

}  // namespace nvrtc_cache::store::lmdb
