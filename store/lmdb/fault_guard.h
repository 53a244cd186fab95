// Fault guard: runs a short, plain function that reads memory-mapped store pages, turning a SIGSEGV
// or SIGBUS raised on this thread while it runs (LMDB following a damaged page it cannot detect) into
// a `false` result instead of a crash of the host.
// Contract: `fn` must be C-like: no C++ objects with destructors, no locks, no allocation (it is
// left by siglongjmp). The first call installs SIGSEGV/SIGBUS handlers once per process; a fault on
// any other thread, or outside a guarded call, is passed to the handler that was installed before
// (or the default action, so crashes and core dumps stay as they were). Thread-safe. fork: the
// one-time installation is guarded by ForkRank::kFaultGuard (store/fork_locks.h); a child keeps the
// handlers. No filesystem access.
#pragma once

namespace nvrtc_cache::store::lmdb {

bool run_guarded(void (*fn)(void*), void* arg);

// Inside a guarded call: leaves it as a fault would (run_guarded returns false). Outside: returns.
// For failure callbacks that must not return (LMDB's assertion callback, which aborts after it).
void escape_if_guarded();

}  // namespace nvrtc_cache::store::lmdb
