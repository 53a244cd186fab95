// Record writer: appends a core::CompileRecord of an NVRTC compile, or a core::HandleCallRecord of an
// nvJitLink link or a libNVVM compile, to NVRTC_CACHE_RECORD's file. The same on every system.
// Contract: thread-safe and safe across processes: each record is one frame appended whole under an
// exclusive lock on the file (platform::append_whole_locked: a frame a failed or short write left
// partial is cut off again under the same lock, so frames never interleave or tear). The file is
// opened per record (not inherited, 0600 on POSIX, never following a final link) and closed at
// once: nothing is held across calls, so fork needs no handling. Fails open: a failure is logged
// once and never changes the compile's result, errno or the last-error value; nothing is printed to
// stdout; never throws.
#pragma once

#include <string>
#include <string_view>

#include "core/handle_entry.h"
#include "direct/dependencies.h"
#include "keying/handle_inputs.h"
#include "libraries/nvrtc/program_table.h"

namespace nvrtc_cache::shim {

// Appends the record of `record`'s compile (its inputs as keyed, `dependencies` as served or
// stored) by the real NVRTC loaded from `library_path` to `file`.
void append_compile_record(const std::string& file, std::string_view library_path, const ProgramRecord& record,
                           const direct::DependencySet& dependencies) noexcept;

// Appends the record of a link or NVVM compile (`inputs` as keyed) made by `library`, loaded from
// `library_path`, in `working_directory`.
void append_handle_record(const std::string& file, core::JitLibrary library, std::string_view library_path,
                          const keying::HandleInputs& inputs, const std::string& working_directory) noexcept;

}  // namespace nvrtc_cache::shim
