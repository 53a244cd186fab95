// The getter hooks. A program whose last compile was served from the cache is answered from its
// core::CompileEntry exactly as NVRTC answered when the entry was recorded; any other program goes to the
// real NVRTC (which compiled it, or will report that it has not).
#include "core/replay_output.h"
#include "libraries/nvrtc/hooks.h"
#include "libraries/nvrtc/program_table.h"

namespace nvrtc_cache::shim::hooks {

// Every getter pair: served -> replay the recorded output; else -> the real getter.
#define NVRTC_CACHE_REPLAY_GETTERS(size_fn, data_fn, field)                                            \
  nvrtcResult size_fn(const interpose::RealNvrtc& real, nvrtcProgram prog, size_t* size) {             \
    if (auto entry = program_table().served_entry(prog)) return core::replay_size(entry->field, size); \
    return real.size_fn(prog, size);                                                                   \
  }                                                                                                    \
  nvrtcResult data_fn(const interpose::RealNvrtc& real, nvrtcProgram prog, char* data) {               \
    if (auto entry = program_table().served_entry(prog)) return core::replay_data(entry->field, data); \
    return real.data_fn(prog, data);                                                                   \
  }

NVRTC_CACHE_REPLAY_GETTERS(nvrtcGetPTXSize, nvrtcGetPTX, ptx)
NVRTC_CACHE_REPLAY_GETTERS(nvrtcGetCUBINSize, nvrtcGetCUBIN, cubin)
NVRTC_CACHE_REPLAY_GETTERS(nvrtcGetLTOIRSize, nvrtcGetLTOIR, ltoir)
NVRTC_CACHE_REPLAY_GETTERS(nvrtcGetOptiXIRSize, nvrtcGetOptiXIR, optixir)
NVRTC_CACHE_REPLAY_GETTERS(nvrtcGetProgramLogSize, nvrtcGetProgramLog, log)
NVRTC_CACHE_REPLAY_GETTERS(nvrtcGetTileIRSize, nvrtcGetTileIR, tileir)
NVRTC_CACHE_REPLAY_GETTERS(nvrtcGetNVVMSize, nvrtcGetNVVM, nvvm)
#undef NVRTC_CACHE_REPLAY_GETTERS

nvrtcResult nvrtcGetLoweredName(const interpose::RealNvrtc& real, nvrtcProgram prog, const char* const name_expression,
                                const char** lowered_name) {
  auto entry = program_table().served_entry(prog);
  if (!entry) return real.nvrtcGetLoweredName(prog, name_expression, lowered_name);
  if (name_expression == nullptr || lowered_name == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  for (const auto& n : entry->lowered_names) {
    if (n.expression == name_expression) return core::replay_lowered_name(n, lowered_name);
  }
  return core::replay_lowered_name(entry->unknown_name, lowered_name);
}

nvrtcResult nvrtcGetPCHCreateStatus(const interpose::RealNvrtc& real, nvrtcProgram prog) {
  if (auto entry = program_table().served_entry(prog)) return static_cast<nvrtcResult>(entry->pch_create_status);
  return real.nvrtcGetPCHCreateStatus(prog);
}

nvrtcResult nvrtcGetPCHHeapSizeRequired(const interpose::RealNvrtc& real, nvrtcProgram prog, size_t* size) {
  auto entry = program_table().served_entry(prog);
  if (!entry) return real.nvrtcGetPCHHeapSizeRequired(prog, size);
  if (size == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  if (entry->pch_heap_required_written) *size = static_cast<size_t>(entry->pch_heap_required);
  return static_cast<nvrtcResult>(entry->pch_heap_required_rc);
}

}  // namespace nvrtc_cache::shim::hooks
