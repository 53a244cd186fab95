// The compile lifecycle, written once for the Linux shim (shim/linux/compile_host.cc) and the Windows proxy
// (shim/windows/compile.cc): decide whether a compile may be cached -> key its inputs -> look up
// the manifest and validate a result's dependencies -> serve it, or (after waiting for another
// compile of the same program, where the platform coordinates them) compile for real under the
// platform's watch, read the outputs back and store them with the dependencies the watch saw.
// What differs between platforms is a CompileHost: the store and statistics of the process, the
// context only known at compile time (working directory, $PWD, NVRTC_APPEND_FLAGS), the watch,
// single-flight and compile records, and the caller's error state (errno, the last-error value).
// Contract: thread-safe for distinct programs (the host's parts must be); never throws: an internal
// error before the real compile ran falls back to compiling uncached, after it the real result
// stands and only the caching is dropped (counted as an error, logged once). Logs through core/log.
#pragma once

#include <nvrtc.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/stats.h"
#include "direct/dependencies.h"
#include "keying/cache_key.h"
#include "libraries/nvrtc/compile_steps.h"
#include "libraries/nvrtc/real_nvrtc.h"
#include "libraries/nvrtc/program_table.h"
#include "store/store.h"

namespace nvrtc_cache::shim {

// The inputs of a compile only known when it runs.
struct CompileContext {
  std::string working_directory;
  std::optional<std::string> pwd_variable;  // $PWD (Linux), none on Windows
  std::optional<std::string> append_flags;  // NVRTC_APPEND_FLAGS as NVRTC reads it
};

// The real compile, run by the host under its watch of NVRTC's file and environment accesses.
struct ObservedCompile {
  nvrtcResult rc = NVRTC_SUCCESS;
  int error_after = 0;                        // the caller's error state after NVRTC returned
  std::int64_t nanos = 0;                     // the compile's duration
  direct::RecordedDependencies dependencies;  // what it depended on; no set: not to be stored
  bool internal_error = false;                // recording the dependencies failed: not stored, an error
};

// A claim on a program held while this compile runs and stores its result; released when destroyed.
class HeldClaim {
 public:
  virtual ~HeldClaim() = default;
};
struct Flight {
  std::unique_ptr<HeldClaim> held;  // null: no claim (none needed, or waiting turned off)
  std::int64_t wait_ns = 0;         // time spent waiting for another compile
};

class CompileHost {
 public:
  virtual ~CompileHost() = default;
  // The store, or nullptr when it is unavailable; whether it is read-only (hits only).
  virtual store::Store* store() = 0;
  virtual bool store_read_only() = 0;
  virtual core::StatsDeltas& stats() = 0;
  // The zstd level results are stored at (core/entry_compression.h; 0: uncompressed).
  virtual int compression_level() { return 0; }
  // NVRTC_APPEND_FLAGS as the option check reads it (getenv).
  virtual std::optional<std::string> append_flags() = 0;
  virtual CompileContext compile_context() = 0;
  // A reason this platform cannot cache any compile now (e.g. its watch is not installed).
  virtual std::optional<NotCacheable> platform_reason_not_cacheable() { return std::nullopt; }
  // The caller's error state now.
  virtual int error_state() = 0;
  // Claims the key, or waits until `result_ready` (a fresh look-up) finds another compile's result.
  virtual Flight claim_or_wait(const keying::CacheKey& key, const std::function<bool()>& result_ready) {
    (void)key, (void)result_ready;
    return {};
  }
  // Runs real.nvrtcCompileProgram under the watch and records the dependencies it observed (the
  // lifecycle ignores them when NVRTC returned what is never cached: result_is_cacheable()).
  virtual ObservedCompile compile_observed(const interpose::RealNvrtc& real, nvrtcProgram prog, int num_options,
                                           const char* const* options, const ProgramRecord& record) = 0;
  // A compile served or stored with these dependencies (the compile record, where one is kept).
  virtual void compile_recorded(const interpose::RealNvrtc& real, const ProgramRecord& record,
                                const direct::DependencySet& dependencies) {
    (void)real, (void)record, (void)dependencies;
  }
  // Statistics may be merged now (`stored`: a result was just stored).
  virtual void flush_stats(bool stored) { (void)stored; }
};

// Compiles `prog` through the cache (or uncached when it may not be cached); returns NVRTC's
// result (served or real) and sets `*error_after` to the error state the caller must see.
nvrtcResult compile_program(CompileHost& host, const interpose::RealNvrtc& real, ProgramRecord& record,
                            nvrtcProgram prog, int num_options, const char* const* options, int* error_after) noexcept;

// Records a compile's options and context into `record.inputs` (the inputs only known at compile time).
void record_compile_context(ProgramRecord& record, int num_options, const char* const* options,
                            const CompileContext& context);

}  // namespace nvrtc_cache::shim
