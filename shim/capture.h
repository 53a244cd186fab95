// capture: reading back every output of a program NVRTC has just compiled, through the real getters,
// into a core::CompileEntry.
// Contract: calls only the real NVRTC's getters on the given (compiled) program; thread-safe for
// distinct programs; returns nullopt when an output could not be captured exactly (the compile is
// then not stored).
#pragma once

#include <nvrtc.h>

#include <optional>

#include "core/compile_entry.h"
#include "keying/program_inputs.h"
#include "shim/interpose/real_nvrtc.h"

namespace nvrtc_cache::shim {

std::optional<core::CompileEntry> capture_outputs(const interpose::RealNvrtc& real, nvrtcProgram prog,
                                                  const keying::ProgramInputs& inputs);

}  // namespace nvrtc_cache::shim
