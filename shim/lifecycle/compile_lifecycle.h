// NVRTC's compile lifecycle over the OS's host (shim/lifecycle/jit_host.h): decide whether a compile
// may be cached, then the one flow every cached call takes (shim/lifecycle/through_cache.h) with an
// NVRTC compile: key its inputs -> look up the manifest and validate a result's dependencies ->
// serve it, or (after waiting for another compile of the same program) compile for real under the
// host's watch, read the outputs back, store them with the dependencies the watch saw, and record
// the compile (NVRTC_CACHE_RECORD). The host may merge the statistics once per compile, whatever path
// it took (and at once after a store).
// Contract: thread-safe for distinct programs (the host's parts must be); never throws: an internal
// error before the real compile ran falls back to compiling uncached, after it the real result
// stands and only the caching is dropped (counted as an error, logged once). Logs through core/log.
#pragma once

#include <nvrtc.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "libraries/nvrtc/compile_steps.h"
#include "libraries/nvrtc/real_nvrtc.h"
#include "libraries/nvrtc/program_table.h"
#include "shim/lifecycle/jit_host.h"

namespace nvrtc_cache::shim {

// The inputs of a compile only known when it runs.
struct CompileContext {
  std::string working_directory;
  std::optional<std::string> pwd_variable;  // $PWD (Linux), none on Windows
  std::optional<std::string> append_flags;  // NVRTC_APPEND_FLAGS as NVRTC reads it
};

// The context of a compile starting now: the working directory (platform::Env), the host's $PWD and
// NVRTC_APPEND_FLAGS.
CompileContext compile_context(JitHost& host);

// Compiles `prog` through the cache (or uncached when it may not be cached); returns NVRTC's
// result (served or real) and sets `*error_after` to the error state the caller must see.
nvrtcResult compile_program(JitHost& host, const interpose::RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog,
                            int num_options, const char* const* options, int* error_after) noexcept;

// Records a compile's options and context into `record.inputs` (the inputs only known at compile time).
void record_compile_context(ProgramRecord& record, int num_options, const char* const* options,
                            const CompileContext& context);

}  // namespace nvrtc_cache::shim
