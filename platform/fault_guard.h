// Fault guard: runs a short, plain function that reads memory-mapped pages (the store's), turning a
// memory fault raised on this thread while it runs (LMDB following a damaged page it cannot detect,
// or a mapped read the disk under it fails) into a `false` result instead of a crash of the host.
// Contract: `fn` must be C-like: no C++ objects with destructors, no locks, no allocation (it is
// left by a long jump). The first call installs the handler once per process; a fault on any other
// thread, or outside a guarded call, is passed on to the handler that was installed before (or the
// default action, so crashes and core dumps stay as they were). Thread-safe. No filesystem access.
// Implementations, chosen by the build: fault_guard_posix.cc (SIGSEGV/SIGBUS handlers; fork: the
// one-time installation is guarded by ForkRank::kFaultGuard of platform/fork_locks.h, and a child
// keeps the handlers) and fault_guard_windows.cc (a vectored exception handler for access
// violations and in-page errors; no fork on Windows).
#pragma once

namespace nvrtc_cache::platform {

bool run_guarded(void (*fn)(void*), void* arg);

// Inside a guarded call: leaves it as a fault would (run_guarded returns false). Outside: returns.
// For failure callbacks that must not return (LMDB's assertion callback, which aborts after it).
void escape_if_guarded();

}  // namespace nvrtc_cache::platform
