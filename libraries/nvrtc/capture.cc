#include "libraries/nvrtc/capture.h"

#include <cstring>
#include <string>

namespace nvrtc_cache::shim {
namespace {

constexpr size_t kUnwrittenSize = ~size_t{0} - 0x5a5a;
const char* const kUnwrittenName = reinterpret_cast<const char*>(std::uintptr_t{0x5a5a5a5a});
// A name expression no program can have added (not valid C++), to learn how NVRTC answers unknowns.
constexpr const char* kNeverAddedName = "\x01nvrtc-cache: never added";

// Fills the buffer with two different patterns: if NVRTC leaves any byte unwritten the two reads
// differ, and replaying would not reproduce the host's buffer exactly.
std::optional<core::RecordedOutput> capture_output(SizeGetter size_getter, DataGetter data_getter, nvrtcProgram prog) {
  if (size_getter == nullptr || data_getter == nullptr) return std::nullopt;
  core::RecordedOutput out;
  size_t size = kUnwrittenSize;
  out.size_rc = size_getter(prog, &size);
  out.size_written = size != kUnwrittenSize;
  out.size = out.size_written ? size : 0;
  if (out.size_rc != NVRTC_SUCCESS || !out.size_written) return std::nullopt;
  std::string first(size, '\0');
  std::string second(size, '\xff');
  out.data_rc = data_getter(prog, first.data());
  if (data_getter(prog, second.data()) != out.data_rc) return std::nullopt;
  if (out.data_rc == NVRTC_SUCCESS) {
    if (first != second) return std::nullopt;
    out.bytes = std::move(first);
  }
  return out;
}

core::RecordedLoweredName capture_lowered_name(const interpose::RealNvrtc& real, nvrtcProgram prog,
                                               const std::string& expression) {
  core::RecordedLoweredName n;
  n.expression = expression;
  const char* lowered = kUnwrittenName;
  n.rc = real.nvrtcGetLoweredName(prog, expression.c_str(), &lowered);
  n.written = lowered != kUnwrittenName;
  n.is_null = n.written && lowered == nullptr;
  if (n.written && lowered != nullptr) n.lowered = lowered;
  return n;
}

}  // namespace

OutputGetters output_getters(const interpose::RealNvrtc& real, core::OutputKind kind) {
  switch (kind) {
    case core::OutputKind::log:
      return {real.nvrtcGetProgramLogSize, real.nvrtcGetProgramLog};
    case core::OutputKind::ptx:
      return {real.nvrtcGetPTXSize, real.nvrtcGetPTX};
    case core::OutputKind::cubin:
      return {real.nvrtcGetCUBINSize, real.nvrtcGetCUBIN};
    case core::OutputKind::ltoir:
      return {real.nvrtcGetLTOIRSize, real.nvrtcGetLTOIR};
    case core::OutputKind::optixir:
      return {real.nvrtcGetOptiXIRSize, real.nvrtcGetOptiXIR};
    case core::OutputKind::tileir:
      return {real.nvrtcGetTileIRSize, real.nvrtcGetTileIR};
    case core::OutputKind::nvvm:
      return {real.nvrtcGetNVVMSize, real.nvrtcGetNVVM};
  }
  return {};
}

bool covers_outputs_of(const core::CompileEntry& entry, const interpose::RealNvrtc& real) {
  for (core::OutputKind kind : core::kOutputKinds) {
    const OutputGetters getters = output_getters(real, kind);
    const bool library_has = getters.size != nullptr || getters.data != nullptr;
    if (library_has && !entry.output(kind).available) return false;
  }
  return true;
}

std::optional<core::CompileEntry> capture_outputs(const interpose::RealNvrtc& real, nvrtcProgram prog,
                                                  const keying::ProgramInputs& inputs) {
  core::CompileEntry e;
  for (core::OutputKind kind : core::kOutputKinds) {
    const OutputGetters getters = output_getters(real, kind);
    core::RecordedOutput& out = e.output(kind);
    if (getters.size == nullptr && getters.data == nullptr) {
      out = core::unavailable_output();  // this NVRTC has no such output
      continue;
    }
    auto captured = capture_output(getters.size, getters.data, prog);
    if (!captured) return std::nullopt;
    out = std::move(*captured);
  }
  if (real.nvrtcGetLoweredName == nullptr) return std::nullopt;
  for (const auto& expression : inputs.name_expressions) {
    e.lowered_names.push_back(capture_lowered_name(real, prog, expression));
  }
  e.unknown_name = capture_lowered_name(real, prog, kNeverAddedName);
  e.unknown_name.expression.clear();
  if (real.nvrtcGetPCHCreateStatus == nullptr || real.nvrtcGetPCHHeapSizeRequired == nullptr) return std::nullopt;
  e.pch_create_status = real.nvrtcGetPCHCreateStatus(prog);
  size_t heap = kUnwrittenSize;
  e.pch_heap_required_rc = real.nvrtcGetPCHHeapSizeRequired(prog, &heap);
  e.pch_heap_required_written = heap != kUnwrittenSize;
  e.pch_heap_required = e.pch_heap_required_written ? heap : 0;
  return e;
}

}  // namespace nvrtc_cache::shim
