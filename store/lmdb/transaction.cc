#include "store/lmdb/transaction.h"

#include <errno.h>

#include "store/lmdb/errors.h"
#include "store/lmdb/library.h"
#include "store/lmdb/structure_check.h"

namespace nvrtc_cache::store::lmdb {

Txn::Txn(SharedEnv& env, unsigned flags) : env_(env), remap_lock_(env.remap_mu, std::defer_lock) {
  if ((flags & MDB_RDONLY) == 0 && !structure_verified(env)) {
    rc_ = MDB_CORRUPTED;
    return;
  }
  remap_lock_.lock();
  // A map growth that LMDB refused left no map (store/lmdb/map_growth.h): never begin on it.
  rc_ = env.abandoned.load(std::memory_order_acquire) || env.lost() ? EIO : begin(flags);
  if (rc_ == MDB_SUCCESS && env.lost()) {  // the mapping was lost during the begin: nothing on it
    api().mdb_txn_abort(std::exchange(txn_, nullptr));
    rc_ = EIO;
  }
}

Txn::~Txn() {
  if (txn_ != nullptr) api().mdb_txn_abort(txn_);
}

int Txn::commit() {
  // Written on pages read from a lost mapping, or without the shared writer's lock: never committed.
  if (env_.lost()) {
    api().mdb_txn_abort(std::exchange(txn_, nullptr));
    return EIO;
  }
  return api().mdb_txn_commit(std::exchange(txn_, nullptr));
}

int Txn::begin(unsigned flags) {
  int rc = api().mdb_txn_begin(env_.env, nullptr, flags, &txn_);
  if (rc != MDB_MAP_RESIZED) return keep_on_success(rc);
  remap_lock_.unlock();
  {
    std::unique_lock exclusive(env_.remap_mu);  // no transaction of this process is active
    rc = api().mdb_env_set_mapsize(env_.env, 0);
  }
  remap_lock_.lock();
  if (rc != MDB_SUCCESS) return keep_on_success(rc);
  return keep_on_success(api().mdb_txn_begin(env_.env, nullptr, flags, &txn_));
}

int Txn::keep_on_success(int rc) {
  if (rc != MDB_SUCCESS) txn_ = nullptr;
  return rc;
}

Status write_failed(SharedEnv& env, int rc, std::string_view what) {
  if (is_corruption(rc)) env.damaged.store(true, std::memory_order_release);
  if (rc == MDB_MAP_FULL) {
    int dead_readers = 0;
    api().mdb_reader_check(env.env, &dead_readers);
  }
  return to_status(rc, what);
}

}  // namespace nvrtc_cache::store::lmdb
