#include "shim/capture.h"

#include <cstring>
#include <string>

namespace nvrtc_cache::shim {
namespace {

constexpr size_t kUnwrittenSize = ~size_t{0} - 0x5a5a;
const char* const kUnwrittenName = reinterpret_cast<const char*>(std::uintptr_t{0x5a5a5a5a});
// A name expression no program can have added (not valid C++), to learn how NVRTC answers unknowns.
constexpr const char* kNeverAddedName = "\x01nvrtc-cache: never added";

using SizeGetter = nvrtcResult (*)(nvrtcProgram, size_t*);
using DataGetter = nvrtcResult (*)(nvrtcProgram, char*);

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

std::optional<core::CompileEntry> capture_outputs(const interpose::RealNvrtc& real, nvrtcProgram prog,
                                                  const keying::ProgramInputs& inputs) {
  core::CompileEntry e;
  struct Kind {
    core::RecordedOutput* out;
    SizeGetter size;
    DataGetter data;
  };
  for (const Kind& k : {Kind{&e.log, real.nvrtcGetProgramLogSize, real.nvrtcGetProgramLog},
                        Kind{&e.ptx, real.nvrtcGetPTXSize, real.nvrtcGetPTX},
                        Kind{&e.cubin, real.nvrtcGetCUBINSize, real.nvrtcGetCUBIN},
                        Kind{&e.ltoir, real.nvrtcGetLTOIRSize, real.nvrtcGetLTOIR},
                        Kind{&e.optixir, real.nvrtcGetOptiXIRSize, real.nvrtcGetOptiXIR}}) {
    auto captured = capture_output(k.size, k.data, prog);
    if (!captured) return std::nullopt;
    *k.out = std::move(*captured);
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
