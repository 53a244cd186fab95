// Opening the store ahead: on Windows a fresh process's first NVRTC call loads the real DLL, which
// takes far longer than opening the store (about 150 ms against 4 ms under Wine: mapping the 90 MB
// image), so the store is opened on a thread of its own meanwhile, and the first hit finds it open.
// Started once per process by the first call of any exported function (before it loads the real DLL),
// or, for the launcher's injected proxy, at its load (the thread runs once the loader lock is free).
// WindowsRuntime::store() asks store_open_ahead_turn() what to do: open the store itself (the thread
// has not begun, or there is none: the compile then opens it and the thread, when it begins, does
// nothing), or wait for the thread, at most kOpenAheadWait: a compile made while its thread holds the
// loader lock (inside a DllMain) could otherwise wait for a thread that waits for that lock; past the
// bound the compile passes through uncached (logged once).
// Contract: thread-safe; never throws; the caller's last-error value is kept; the thread holds a
// reference on the proxy's module (released as it exits), so a FreeLibrary meanwhile cannot unmap
// its code. Nothing is started where the cache is disabled or has no directory (the thread checks).
#pragma once

#include <chrono>

namespace nvrtc_cache::shim::windows {

inline constexpr std::chrono::milliseconds kOpenAheadWait{5000};

// Starts the thread, once per process; `open` is what it runs (the store's once-only open) unless a
// compile has taken the open over first.
void start_store_open_ahead(void (*open)());

enum class OpenAheadTurn {
  kOpenHere,  // no thread is opening the store: open it here (the thread, if any, then does nothing)
  kOpened,    // the thread opened it: use what it opened
  kTimedOut,  // the thread is still opening it after kOpenAheadWait: pass this compile through
};
OpenAheadTurn store_open_ahead_turn();

}  // namespace nvrtc_cache::shim::windows
