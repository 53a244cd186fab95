// The call report: which real NVRTC, nvJitLink and libNVVM this process's compiles reached the cache's
// hooks through, for `nvrtc-cache doctor -- CMD` (tools/doctor/run.cc). Only when NVRTC_CACHE_REPORT_DIR
// names a directory: each reached compile (nvrtcCompileProgram, nvJitLinkComplete, nvvmCompileProgram)
// rewrites <dir>/<pid>.report (write to a temporary file, then rename: a reader sees a whole report,
// and one left by os._exit or a kill is as current as the last compile). Its format, one line per
// library, tab-separated: `library path major.minor build-id-hex calls` after a first line
// `nvrtc-cache-report 1`.
// Contract: thread-safe and lock-free (a fork at any point leaves the child a consistent table; the
// child's counts start from zero); never throws; keeps errno; at most kMaxReportedLibraries libraries,
// later ones are not reported. Without the variable: one relaxed atomic load per call.
#pragma once

#include <cstddef>

#include "keying/program_inputs.h"

namespace nvrtc_cache::shim {

inline constexpr std::size_t kMaxReportedLibraries = 8;
inline constexpr const char* kReportDirVariable = "NVRTC_CACHE_REPORT_DIR";

// Notes one compile reached through `library` ("NVRTC", "nvJitLink", "libNVVM"), loaded as `link_map`
// (`code` one of its functions, for its path when the link map has none).
void note_reached_call(const char* library, const void* link_map, const void* code,
                       const keying::LibraryIdentity& identity) noexcept;

}  // namespace nvrtc_cache::shim
