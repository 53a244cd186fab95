// Fault guard: runs a short, plain function that reads memory-mapped pages (the store's), turning a
// memory fault raised on this thread while it runs (LMDB following a damaged page it cannot detect,
// or a mapped read the disk under it fails) into a `false` result instead of a crash of the host.
// Contract: `fn` must be C-like: no C++ objects with destructors, no locks, no allocation (it is
// left by a long jump). The first call installs the handler once per process; a fault on any other
// thread, or outside a guarded call (and not in a watched mapping, below), is passed on to the
// handler that was installed before (or the default action, so crashes and core dumps stay as they
// were). Thread-safe. No filesystem access.
// Implementations, chosen by the build: fault_guard_posix.cc (SIGSEGV/SIGBUS handlers; fork: the
// one-time installation is guarded by ForkRank::kFaultGuard of platform/fork_locks.h, and a child
// keeps the handlers) and fault_guard_windows.cc (a vectored exception handler for access
// violations and in-page errors; no fork on Windows).
#pragma once

#include <cstddef>

namespace nvrtc_cache::platform {

bool run_guarded(void (*fn)(void*), void* arg);

// Inside a guarded call: leaves it as a fault would (run_guarded returns false). Outside: returns.
// For failure callbacks that must not return (LMDB's assertion callback, which aborts after it).
void escape_if_guarded();

// A shared mapping that must never kill the host, whatever thread or code touches it (the counters
// file, whose cells hot paths add to with no call around them): a SIGBUS inside [begin, begin +
// length) — the file truncated by another process, a page a full filesystem cannot back — replaces
// the whole range with private zero pages (mmap MAP_FIXED, from the handler) and the faulting
// access is made again there; `on_replaced` is then called from the handler (async-signal-safe
// code only: lock-free atomics). What is written there afterwards is lost, never the host. Installs
// the handlers. At most 64 mappings at once: false when none is free (then map nothing). Windows:
// nothing to watch (a mapped file cannot be truncated there, nor is an extended one sparse): true.
bool watch_mapping(void* begin, std::size_t length, void (*on_replaced)());
// Stops watching the mapping starting at `begin` (before it is unmapped).
void unwatch_mapping(void* begin);

}  // namespace nvrtc_cache::platform
