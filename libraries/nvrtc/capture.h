// capture: reading back every output of a program NVRTC has just compiled, through the real getters,
// into a core::CompileEntry.
// Contract: calls only the real NVRTC's getters on the given (compiled) program; thread-safe for
// distinct programs; returns nullopt when an output could not be captured exactly (the compile is
// then not stored). output_getters and covers_outputs_of are pure.
#pragma once

#include <nvrtc.h>

#include <optional>

#include "core/compile_entry.h"
#include "keying/program_inputs.h"
#include "libraries/nvrtc/real_nvrtc.h"

namespace nvrtc_cache::shim {

using SizeGetter = nvrtcResult (*)(nvrtcProgram, size_t*);
using DataGetter = nvrtcResult (*)(nvrtcProgram, char*);
struct OutputGetters {
  SizeGetter size = nullptr;
  DataGetter data = nullptr;
};
// The real NVRTC's getters of one output kind (both nullptr where that NVRTC has no such output).
OutputGetters output_getters(const interpose::RealNvrtc& real, core::OutputKind kind);

// Whether `entry` holds every output `real` has getters for (an entry recorded before this build knew
// an output, or through another NVRTC, cannot answer them: it is not served).
bool covers_outputs_of(const core::CompileEntry& entry, const interpose::RealNvrtc& real);

std::optional<core::CompileEntry> capture_outputs(const interpose::RealNvrtc& real, nvrtcProgram prog,
                                                  const keying::ProgramInputs& inputs);

}  // namespace nvrtc_cache::shim
