// LastErrorKept: the thread's last-error value (GetLastError) restored when a scope ends, so the
// Windows port's own work, which runs inside its host's calls, never changes the value the host
// sees; the Windows counterpart of ErrnoGuard (platform/errno_guard.h). Windows only.
// Contract: one object per scope and thread; never throws; no filesystem access.
#pragma once

#include <windows.h>

namespace nvrtc_cache::platform::windows {

// Restores the last-error value on scope exit to the value it had when `set()` was last called (or
// at entry).
class LastErrorKept {
 public:
  LastErrorKept() : saved_(GetLastError()) {}
  ~LastErrorKept() { SetLastError(saved_); }
  LastErrorKept(const LastErrorKept&) = delete;
  LastErrorKept& operator=(const LastErrorKept&) = delete;
  void set(DWORD value) { saved_ = value; }

 private:
  DWORD saved_;
};

}  // namespace nvrtc_cache::platform::windows
