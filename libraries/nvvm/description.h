// libNVVM described to the handle lifecycle (shim/lifecycle/handle_lifecycle.h): which return codes
// are kept, which options refuse caching (libraries/nvvm/options.h), its outputs (the compiled result
// and the program log) and how they are read back, and its completing call (nvvmCompileProgram, run
// again with the recorded options). The hooks (libraries/nvvm/hooks.cc) and the lifecycle tests run it.
// Contract: stateless; thread-safe for distinct handles; the caller keeps its error state.
#pragma once

#include <nvvm.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keying/handle_inputs.h"
#include "libraries/nvvm/options.h"
#include "libraries/nvvm/real_nvvm.h"
#include "shim/lifecycle/handle_lifecycle.h"

namespace nvrtc_cache::shim {

// The outputs, in core::outputs_of(JitLibrary::nvvm)'s order.
enum NvvmOutput : std::size_t { kResult, kLog };
// The input types of a program's record: a module, a lazily added module, a verification.
enum NvvmInputType : std::int32_t { kModule = 0, kLazyModule = 1, kVerified = 2 };

struct NvvmDescription {
  using Real = interpose::RealNvvm;
  using Handle = nvvmProgram;
  using Result = nvvmResult;
  static constexpr core::JitLibrary kLibrary = core::JitLibrary::nvvm;
  static constexpr std::string_view kSchema = keying::kNvvmKeySchema;
  static constexpr const char* kWhat = "NVVM compile";

  // Success and the errors its modules and options decide (not out of memory, a cancelled compile or
  // an invalid program handle).
  static bool cacheable(Result rc) {
    switch (rc) {
      case NVVM_SUCCESS:
      case NVVM_ERROR_IR_VERSION_MISMATCH:
      case NVVM_ERROR_INVALID_INPUT:
      case NVVM_ERROR_INVALID_IR:
      case NVVM_ERROR_INVALID_OPTION:
      case NVVM_ERROR_NO_MODULE_IN_PROGRAM:
      case NVVM_ERROR_COMPILATION:
        return true;
      default:
        return false;
    }
  }

  static std::optional<keying::OptionRefusal> options_not_cacheable(const HandleRecord& record) {
    return keying::nvvm_options_not_cacheable(record.inputs.options);
  }

  static const void* code(const Real& real) { return reinterpret_cast<const void*>(real.nvvmCompileProgram); }

  static std::optional<std::vector<core::RecordedOutput>> read_outputs(const Real& real, Handle handle) {
    std::vector<core::RecordedOutput> outputs;
    for (auto output : {handle_lifecycle::read_back(handle, real.nvvmGetCompiledResultSize, real.nvvmGetCompiledResult),
                        handle_lifecycle::read_back(handle, real.nvvmGetProgramLogSize, real.nvvmGetProgramLog)}) {
      if (!output) return std::nullopt;
      outputs.push_back(std::move(*output));
    }
    return outputs;
  }

  static Result run_recorded(const Real& real, Handle handle, const HandleRecord& record) {
    std::vector<const char*> options;
    for (const std::string& option : record.inputs.options) options.push_back(option.c_str());
    return real.nvvmCompileProgram(handle, static_cast<int>(options.size()), options.data());
  }
};
}  // namespace nvrtc_cache::shim
