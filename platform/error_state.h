// The caller's error state: errno on POSIX, the thread's last-error value (GetLastError) on Windows,
// read and set through one interface so that code shared by both ports keeps its host's value the
// same way (error_state_posix.cc / error_state_windows.cc). ErrorStateKept restores it when a scope
// ends, to the value it had when set() was last called (or at entry).
// Contract: per thread; never throws; no filesystem access; errno itself is kept by error_state().
#pragma once

namespace nvrtc_cache::platform {

int error_state();
void set_error_state(int value);

class ErrorStateKept {
 public:
  ErrorStateKept() : saved_(error_state()) {}
  ~ErrorStateKept() { set_error_state(saved_); }
  ErrorStateKept(const ErrorStateKept&) = delete;
  ErrorStateKept& operator=(const ErrorStateKept&) = delete;
  void set(int value) { saved_ = value; }

 private:
  int saved_;
};

}  // namespace nvrtc_cache::platform
