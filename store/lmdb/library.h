// LmdbLibrary: LMDB's functions as a table. Normally LMDB is built from the distribution's source
// package into this library, position-independent with hidden symbols (NVRTC_CACHE_LMDB_LINKED; see
// CMakeLists.txt and scripts/fetch_lmdb_source.sh): the table holds its functions' addresses and
// nothing is loaded at run time. Without that source, the functions are loaded at first use from the
// distribution's shared liblmdb with RTLD_LOCAL (its static liblmdb.a is not position-independent,
// and linking the shared one normally would put LMDB's symbols into the host's global scope, where a
// host's own, different LMDB could bind to them), by the path found at build time, else by soname.
// Contract: thread-safe; loaded once and never unloaded; lmdb_library() returns nullptr (and `error`
// says why) when the library cannot be loaded, and callers then treat the store as unavailable.
// fork: the tables are published lock-free, so a child never inherits a half-done load.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace nvrtc_cache::store::lmdb {

#define NVRTC_CACHE_LMDB_FUNCTIONS(X)                                                                                 \
  X(mdb_env_create)                                                                                                   \
  X(mdb_env_open) X(mdb_env_close) X(mdb_env_set_mapsize) X(mdb_env_set_maxdbs) X(mdb_env_set_maxreaders)             \
      X(mdb_env_get_maxkeysize) X(mdb_reader_check) X(mdb_strerror) X(mdb_txn_begin) X(mdb_txn_commit)                \
          X(mdb_txn_abort) X(mdb_dbi_open) X(mdb_drop) X(mdb_get) X(mdb_put) X(mdb_del) X(mdb_cursor_open)            \
              X(mdb_cursor_get) X(mdb_cursor_close) X(mdb_env_info) X(mdb_env_stat) X(mdb_stat) X(mdb_env_set_assert) \
                  X(mdb_env_get_fd) X(mdb_env_copyfd2)

struct LmdbLibrary {
#define NVRTC_CACHE_LMDB_MEMBER(name) decltype(&::name) name = nullptr;
  NVRTC_CACHE_LMDB_FUNCTIONS(NVRTC_CACHE_LMDB_MEMBER)
#undef NVRTC_CACHE_LMDB_MEMBER
};

const LmdbLibrary* lmdb_library(std::string* error = nullptr);

// The same functions, each run under the fault guard (platform/fault_guard.h): a SIGSEGV/SIGBUS or an
// LMDB assertion while LMDB follows a damaged page makes the call return MDB_CORRUPTED instead of
// crashing the host (void functions just return). Every environment the store opens routes LMDB's
// assertion callback to the guard (install_assert_guard). Null when lmdb_library() is.
const LmdbLibrary* guarded_lmdb_library();
void install_assert_guard(MDB_env* env);

// The guarded table, for code only reached after LmdbStore::open verified that the library loaded.
inline const LmdbLibrary& api() { return *guarded_lmdb_library(); }

// Bytes as LMDB takes and gives them (LMDB never writes through a key or value it is given).
inline MDB_val to_val(std::string_view bytes) { return MDB_val{bytes.size(), const_cast<char*>(bytes.data())}; }
inline std::string_view to_view(const MDB_val& val) { return {static_cast<const char*>(val.mv_data), val.mv_size}; }

// LMDB's file handle (mdb_env_get_fd) as platform::stat_open_file() takes it (a descriptor; a
// HANDLE on Windows).
inline std::intptr_t os_handle(int fd) { return fd; }
inline std::intptr_t os_handle(void* handle) { return reinterpret_cast<std::intptr_t>(handle); }

// Closes a cursor when it goes out of scope.
using CursorOwner = std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)>;
inline CursorOwner own_cursor(MDB_cursor* cursor) { return CursorOwner(cursor, api().mdb_cursor_close); }

}  // namespace nvrtc_cache::store::lmdb
