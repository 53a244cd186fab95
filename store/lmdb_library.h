// LmdbLibrary: LMDB's functions, loaded at first use from the distribution's shared liblmdb with
// RTLD_LOCAL. The distribution's static liblmdb.a is not position-independent, and linking the
// shared one normally would put LMDB's symbols into the host's global scope (where a host's own,
// different LMDB could bind to them). A local load keeps them private to the cache. It is opened by
// the path found at build time, else by its soname (searched as the host's dynamic loader does).
// Contract: thread-safe; loaded once and never unloaded; lmdb() returns nullptr (and `error` says
// why) when the library cannot be loaded, and callers then treat the store as unavailable.
#pragma once

#include <lmdb.h>

#include <string>

namespace nvrtc_cache::store {

#define NVRTC_CACHE_LMDB_FUNCTIONS(X)                                                                    \
  X(mdb_env_create) X(mdb_env_open) X(mdb_env_close) X(mdb_env_set_mapsize) X(mdb_env_set_maxdbs)        \
  X(mdb_env_set_maxreaders) X(mdb_env_get_maxkeysize) X(mdb_reader_check) X(mdb_strerror) X(mdb_txn_begin) \
  X(mdb_txn_commit) X(mdb_txn_abort) X(mdb_dbi_open) X(mdb_drop) X(mdb_get) X(mdb_put) X(mdb_del)         \
  X(mdb_cursor_open) X(mdb_cursor_get) X(mdb_cursor_close) X(mdb_env_info) X(mdb_env_stat) X(mdb_stat)   \
  X(mdb_env_set_assert) X(mdb_env_get_fd)

struct LmdbLibrary {
#define NVRTC_CACHE_LMDB_MEMBER(name) decltype(&::name) name = nullptr;
  NVRTC_CACHE_LMDB_FUNCTIONS(NVRTC_CACHE_LMDB_MEMBER)
#undef NVRTC_CACHE_LMDB_MEMBER
};

const LmdbLibrary* lmdb_library(std::string* error = nullptr);

// The same functions, each run under the fault guard (store/fault_guard.h): a SIGSEGV/SIGBUS or an
// LMDB assertion while LMDB follows a damaged page makes the call return MDB_CORRUPTED instead of
// crashing the host (void functions just return). Every environment the store opens routes LMDB's
// assertion callback to the guard (install_assert_guard). Null when lmdb_library() is.
const LmdbLibrary* guarded_lmdb_library();
void install_assert_guard(MDB_env* env);

}  // namespace nvrtc_cache::store
