// Txn: one LMDB transaction on a SharedEnv, aborted unless committed.
// Contract:
//  - Threads: holds the environment's remap lock shared for its lifetime (a map growth in this
//    process, store/lmdb/map_growth.h, takes it exclusively), and adopts a map size grown by another
//    process (MDB_MAP_RESIZED) once, taking the lock exclusively meanwhile. A thread must not hold
//    two Txn on one environment where one of them may need to remap. An environment abandoned
//    meanwhile (a growth LMDB refused left it without a map) begins nothing: EIO. One whose mapping
//    was lost (SharedEnv::lost) begins nothing and commits nothing (aborted: EIO).
//  - A write transaction is begun only on a store whose structure was verified in this process
//    (store/lmdb/structure_check.h): writing to damaged pages could make LMDB corrupt memory.
//  - fork: a Txn never crosses fork (it lives within one operation of one thread).
#pragma once

#include <lmdb.h>

#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <utility>

#include "store/lmdb/environment_registry.h"
#include "store/status.h"

namespace nvrtc_cache::store::lmdb {

class Txn {
 public:
  Txn(SharedEnv& env, unsigned flags);
  ~Txn();
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  int begin_rc() const { return rc_; }
  MDB_txn* get() const { return txn_; }
  int commit();
  // Forgets the transaction without ending it (its environment is being abandoned as damaged).
  void release() { txn_ = nullptr; }

 private:
  int begin(unsigned flags);
  int keep_on_success(int rc);

  SharedEnv& env_;
  std::shared_lock<std::shared_mutex> remap_lock_;
  MDB_txn* txn_ = nullptr;
  int rc_ = MDB_SUCCESS;
};

// The Status for a failed write: marks the environment damaged on a corruption code (the next
// acquire quarantines it) and, on a full map, releases reader slots left by killed processes (they
// pin old pages).
Status write_failed(SharedEnv& env, int rc, std::string_view what);

}  // namespace nvrtc_cache::store::lmdb
