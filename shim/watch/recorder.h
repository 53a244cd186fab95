// recorder: what the libc interposers (shim/watch/libc_interposers.cc) tell the compile watch
// (shim/watch/file_watch.cc). Internal to shim/watch.
// Contract: callable from inside any libc hook, on any thread: allocate nothing, take no lock, never
// touch errno (the callers preserve it). anyone_watching() is the hooks' fast path: one
// initial-exec TLS load and, while a compile is watched somewhere, one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstddef>

#include "shim/watch/file_watch.h"

#define NVRTC_CACHE_HOOK_TLS __attribute__((tls_model("initial-exec")))

namespace nvrtc_cache::shim::watch {

// Reasons a compile cannot be replayed, said by the interposers.
inline constexpr const char* kListedDirectory = "NVRTC listed a directory";
inline constexpr const char* kChangedDirectory = "NVRTC changed the working directory";
inline constexpr const char* kStartedProgram = "NVRTC started another program, whose reads are not observed";
inline constexpr const char* kReadUserDatabase = "NVRTC read the user database";

// The watch recording on this thread; compiles being watched in the process.
extern thread_local CompileWatch::Buffer* t_active NVRTC_CACHE_HOOK_TLS;
extern std::atomic<int> g_active_watches;

inline bool anyone_watching() { return t_active != nullptr || g_active_watches.load(std::memory_order_relaxed) != 0; }

// What a hook saw. `subject` is a path (or a variable name for kGetenv); nullptr or "" records
// nothing (such a call fails before touching the filesystem).
void observe(const char* function, WatchEventKind kind, bool succeeded, bool for_writing, int dirfd,
             const char* subject, const char* value, std::size_t value_size, const void* caller);

// A call the record cannot represent (listing a directory by descriptor, changing directory).
void observe_taint(const char* function, const char* why, const void* caller);

}  // namespace nvrtc_cache::shim::watch
