// Record writer: appends a core::CompileRecord of a compile to NVRTC_CACHE_RECORD's file.
// Contract: thread-safe and safe across processes: each record is one frame written with one
// O_APPEND write(2) while holding flock(LOCK_EX) on the file (a frame a failed or short write left
// partial is cut off again under the same lock, so frames never interleave or tear). The file is
// opened per record (O_CLOEXEC, 0600, never following a final symbolic link) and closed at once:
// nothing is held across calls, so fork needs no handling. Fails open: a failure is logged once and
// never changes the compile's result or errno; nothing is printed to stdout; never throws.
#pragma once

#include "direct/dependencies.h"
#include "shim/interpose/real_nvrtc.h"
#include "shim/program_table.h"

namespace nvrtc_cache::shim {

// Appends the record of `record`'s compile (its inputs as keyed, `dependencies` as served or
// stored) to `file`.
void append_compile_record(const std::string& file, const interpose::RealNvrtc& real, const ProgramRecord& record,
                           const direct::DependencySet& dependencies) noexcept;

}  // namespace nvrtc_cache::shim
