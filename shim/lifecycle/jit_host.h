// JitHost: what an OS gives the lifecycles of every JIT library (NVRTC's compiles:
// shim/lifecycle/compile_lifecycle.h; nvJitLink's links and libNVVM's compiles:
// shim/lifecycle/handle_lifecycle.h), and nothing of any library: the store and its statistics,
// single-flight claims, the watch a real call runs under, where calls are recorded and reported
// (platform/error_state.h). Linux's is shim/linux/linux_host.h (the Runtime, the libc watch, errno), Windows'
// shim/windows/windows_host.h (the WindowsRuntime, the import watch, the last-error value); the lifecycle tests script
// one. Contract: one host per process, thread-safe; jit_host() is created on first use and never freed. The watch
// records the calling thread only; a host's calls never throw except std::bad_alloc, and none changes the caller's
// error state.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/stats.h"
#include "direct/dependencies.h"
#include "keying/cache_key.h"
#include "keying/program_inputs.h"
#include "store/store.h"

namespace nvrtc_cache::shim {

using SteadyClock = std::chrono::steady_clock;

inline std::int64_t nanos_between(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// Why a call must not be cached, and the counter (NVRTC's row; core::reason_of gives another
// library's) that says so.
struct NotCacheable {
  std::string why;  // for the log: "option --create-pch=a.pch has side effects"
  core::Counter reason;
};

// A claim on a key held while this call runs and stores its result; released when destroyed.
class HeldClaim {
 public:
  virtual ~HeldClaim() = default;
};
struct Flight {
  std::unique_ptr<HeldClaim> held;  // null: no claim (none needed, or waiting turned off)
  std::int64_t wait_ns = 0;         // time spent waiting for another call
};

// The library whose real call is watched.
struct WatchedLibrary {
  core::JitLibrary library;
  const void* code;  // an address inside it (the watch follows that object and what it loads)
  // Whether every call reads a file (NVRTC probes its working directory): then a watch that saw
  // nothing was bypassed, and the call is not stored.
  bool reads_files_always = false;
};

// What a library's call depended on, from the watch's observations and the variables this host
// records for every call of that library (read once per process, where no watch sees them): the
// library's rule (direct::record_dependencies, with its extras).
using DependencyRule = std::function<direct::RecordedDependencies(std::vector<direct::Observation> observations,
                                                                  std::int64_t start_realtime_ns,
                                                                  const std::vector<std::string>& always_recorded)>;

// A real call run under the watch.
struct WatchedCall {
  std::int64_t nanos = 0;                     // the call's duration
  int error_after = 0;                        // the caller's error state after the library returned
  direct::RecordedDependencies dependencies;  // what it depended on; no set: not to be stored
  bool internal_error = false;                // recording the dependencies failed: not stored, an error
};

class JitHost {
 public:
  virtual ~JitHost() = default;
  // Whether the cache is on (NVRTC_CACHE_DISABLE): off, no call is recorded.
  virtual bool enabled() = 0;
  // The store, or nullptr when it is unavailable; whether it is read-only (hits only).
  virtual store::Store* store() = 0;
  virtual bool store_read_only() = 0;
  virtual core::StatsDeltas& stats() = 0;
  // The zstd level results are stored at (core/entry_compression.h; 0: uncompressed).
  virtual int compression_level() { return 0; }
  // A reason this host cannot cache any call now (e.g. its watch cannot be installed).
  virtual std::optional<NotCacheable> reason_not_cacheable() { return std::nullopt; }
  // The shell's idea of the working directory ($PWD), where the OS has that convention.
  virtual std::optional<std::string> shell_directory() { return std::nullopt; }
  // Claims the key, or waits until `result_ready` (a fresh look-up) finds another call's result.
  virtual Flight claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready) {
    (void)key, (void)result_ready;
    return {};
  }
  // Runs `call` (the real library's) under the watch of `library`'s file and environment accesses
  // and records, by `rule`, what it depended on. The caller's error state is left as the call left it.
  virtual WatchedCall run_watched(const WatchedLibrary& library, const std::function<void()>& call,
                                  const DependencyRule& rule) = 0;
  // The file calls are recorded into (NVRTC_CACHE_RECORD; empty: none), and the path of the library
  // loaded as `link_map` (Linux; nullptr elsewhere) containing `code`, as a record names it.
  virtual std::string record_file() { return {}; }
  virtual std::string library_path(const void* link_map, const void* code) {
    (void)link_map, (void)code;
    return {};
  }
  // A completing call reached the cache through `library` (for `nvrtc-cache doctor -- CMD`).
  virtual void note_call(core::JitLibrary library, const void* link_map, const void* code,
                         const keying::LibraryIdentity& identity) {
    (void)library, (void)link_map, (void)code, (void)identity;
  }
  // Statistics may be merged now (`stored`: a result was just stored).
  virtual void flush_stats(bool stored) { (void)stored; }
};

// This process's host (the OS's; defined once per OS).
JitHost& jit_host();

}  // namespace nvrtc_cache::shim
