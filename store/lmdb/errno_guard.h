// ErrnoGuard: restores errno when it goes out of scope. The store runs inside host processes that
// may inspect errno, so every public entry point of the LMDB store (and the library loader) holds one.
// Contract: no I/O, no allocation; errno is per thread, and so is a guard.
#pragma once

#include <cerrno>

namespace nvrtc_cache::store::lmdb {

class ErrnoGuard {
 public:
  ErrnoGuard() : saved_(errno) {}
  ~ErrnoGuard() { errno = saved_; }
  ErrnoGuard(const ErrnoGuard&) = delete;
  ErrnoGuard& operator=(const ErrnoGuard&) = delete;

 private:
  int saved_;
};

}  // namespace nvrtc_cache::store::lmdb
