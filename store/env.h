// store::Env: the platform's Env (platform/env.h: the filesystem, the environment and the clock) with
// the store's own fault hook. LMDB's I/O does not go through the Env; a test Env replaces the outcome
// of a whole store operation with fault_for() instead.
// Contract: as platform::Env (thread-safe, never throws, Env::system() lives for the whole process and
// is created lock-free); fault_for() is asked once per operation, before LMDB is called.
#pragma once

#include "platform/env.h"

namespace nvrtc_cache::store {

// Store operations whose LMDB outcome a test Env can replace with a fault.
enum class StoreOperation { kOpen, kGet, kPut, kErase, kEvict };

class Env : public platform::Env {
 public:
  // 0 to let LMDB perform `operation`, or the LMDB/errno code to report instead.
  virtual int fault_for(StoreOperation) { return 0; }

  // The system's Env (platform::Env::system()'s calls) with no faults.
  static Env* system();
};

}  // namespace nvrtc_cache::store
