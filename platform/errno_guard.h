// ErrnoGuard: restores errno when a scope ends, so the shim's own work never changes the errno a
// host sees (on Windows the thread's last-error value has its own guard: platform/windows/last_error.h).
// Contract: one object per scope and thread; never throws; async-signal-safe; no filesystem access.
#pragma once

#include <cerrno>

namespace nvrtc_cache::platform {

// Restores errno on scope exit to the value it had when `set()` was last called (or at entry).
class ErrnoGuard {
 public:
  ErrnoGuard() : saved_(errno) {}
  ~ErrnoGuard() { errno = saved_; }
  ErrnoGuard(const ErrnoGuard&) = delete;
  ErrnoGuard& operator=(const ErrnoGuard&) = delete;
  void set(int value) { saved_ = value; }

 private:
  int saved_;
};

}  // namespace nvrtc_cache::platform
