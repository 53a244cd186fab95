// Record writer: appends a core::CompileRecord of an NVRTC compile, or a core::HandleCallRecord of an
// nvJitLink link or a libNVVM compile, to NVRTC_CACHE_RECORD's file.
// Contract: thread-safe and safe across processes: each record is one frame written with one
// O_APPEND write(2) while holding flock(LOCK_EX) on the file (a frame a failed or short write left
// partial is cut off again under the same lock, so frames never interleave or tear). The file is
// opened per record (O_CLOEXEC, 0600, never following a final symbolic link) and closed at once:
// nothing is held across calls, so fork needs no handling. Fails open: a failure is logged once and
// never changes the compile's result or errno; nothing is printed to stdout; never throws.
#pragma once

#include "core/handle_entry.h"
#include "direct/dependencies.h"
#include "keying/handle_inputs.h"
#include "shim/interpose/real_nvrtc.h"
#include "shim/program_table.h"

namespace nvrtc_cache::shim {

// Appends the record of `record`'s compile (its inputs as keyed, `dependencies` as served or
// stored) to `file`.
void append_compile_record(const std::string& file, const interpose::RealNvrtc& real, const ProgramRecord& record,
                           const direct::DependencySet& dependencies) noexcept;

// Appends the record of a link or NVVM compile (`inputs` as keyed) made by `library`, whose real
// library has `link_map` (its path; `code` is an address inside it, when the map names none),
// in `working_directory`.
void append_handle_record(const std::string& file, core::JitLibrary library, const void* link_map, const void* code,
                          const keying::HandleInputs& inputs, const std::string& working_directory) noexcept;

}  // namespace nvrtc_cache::shim
