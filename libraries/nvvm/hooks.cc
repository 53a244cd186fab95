// libNVVM described to the handle lifecycle (shim/lifecycle/handle_lifecycle.h): a compile is keyed at
// nvvmCompileProgram from each module added (nvvmAddModuleToProgram, nvvmLazyAddModuleToProgram: its
// bytes, name and whether lazily) and the compile's options; its outputs are the compiled result
// (PTX, or LTO-IR with -gen-lto) and the program log. A verification before the compile is keyed
// as an input (nvvmVerifyProgram below).
#include "libraries/nvvm/hooks.h"

#include <optional>
#include <string>
#include <vector>

#include "libraries/nvvm/options.h"
#include "shim/lifecycle/handle_lifecycle.h"

namespace nvrtc_cache::shim::hooks {
namespace {

namespace lifecycle = handle_lifecycle;
using interpose::RealNvvm;

// The outputs, in core::outputs_of(JitLibrary::nvvm)'s order.
enum Output : std::size_t { kResult, kLog };
// The input types of a program's record: a module, a lazily added module, a verification.
enum InputType : std::int32_t { kModule = 0, kLazyModule = 1, kVerified = 2 };

struct NvvmDescription {
  using Real = RealNvvm;
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
    for (auto output : {lifecycle::read_back(handle, real.nvvmGetCompiledResultSize, real.nvvmGetCompiledResult),
                        lifecycle::read_back(handle, real.nvvmGetProgramLogSize, real.nvvmGetProgramLog)}) {
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
using D = NvvmDescription;

nvvmResult add_module(const RealNvvm& real, nvvmProgram prog, const char* buffer, size_t size, const char* name,
                      bool lazy) {
  const auto add = lazy ? real.nvvmLazyAddModuleToProgram : real.nvvmAddModuleToProgram;
  std::shared_ptr<HandleRecord> record = lifecycle::record_of(prog);
  if (!record) return add(prog, buffer, size, name);
  lifecycle::materialize<D>(real, prog, *record);
  const nvvmResult rc = add(prog, buffer, size, name);
  lifecycle::record_input(*record, rc, lazy ? kLazyModule : kModule, buffer, size, name, false);
  return rc;
}

}  // namespace

nvvmResult nvvmCreateProgram(const RealNvvm& real, nvvmProgram* prog) {
  const nvvmResult rc = real.nvvmCreateProgram(prog);
  if (rc != NVVM_SUCCESS || prog == nullptr || *prog == nullptr || !Runtime::instance().enabled()) return rc;
  lifecycle::record_created(*prog, D::kLibrary, real.identity, {}, true, "");
  return rc;
}

nvvmResult nvvmDestroyProgram(const RealNvvm& real, nvvmProgram* prog) {
  if (prog != nullptr && *prog != nullptr) {
    const platform::ErrnoGuard guard;
    handle_table().erase(*prog);
  }
  return real.nvvmDestroyProgram(prog);
}

nvvmResult nvvmAddModuleToProgram(const RealNvvm& real, nvvmProgram prog, const char* buffer, size_t size,
                                  const char* name) {
  return add_module(real, prog, buffer, size, name, false);
}

nvvmResult nvvmLazyAddModuleToProgram(const RealNvvm& real, nvvmProgram prog, const char* buffer, size_t size,
                                      const char* name) {
  return add_module(real, prog, buffer, size, name, true);
}

nvvmResult nvvmCompileProgram(const RealNvvm& real, nvvmProgram prog, int num_options, const char** options) {
  if (std::shared_ptr<HandleRecord> record = lifecycle::record_of(prog); record && !record->completed) {
    const platform::ErrnoGuard guard;
    try {
      if (num_options < 0 || (num_options > 0 && options == nullptr)) {
        not_capturable(*record, "the options were NULL");
      } else {
        for (int i = 0; record->capturable && i < num_options; ++i) {
          if (options[i] == nullptr)
            not_capturable(*record, "an option was NULL");
          else
            record->inputs.options.emplace_back(options[i]);
        }
      }
    } catch (...) {
      not_capturable(*record, "the options could not be recorded");
    }
  }
  return lifecycle::complete<D>(real, prog, [&] { return real.nvvmCompileProgram(prog, num_options, options); });
}

// Before the compile (cuda.core verifies every program it compiles), a verification joins the
// inputs: its options, in order, as one input of type kVerified (measured with 13.0: the compile's
// result and log are the same with and without it, but the key does not assume so). A failed one, or
// one after the compile (its log replaces the compile's: the served compile is first run for real),
// leaves the program uncached.
nvvmResult nvvmVerifyProgram(const RealNvvm& real, nvvmProgram prog, int num_options, const char** options) {
  std::shared_ptr<HandleRecord> record = lifecycle::record_of(prog);
  if (!record) return real.nvvmVerifyProgram(prog, num_options, options);
  lifecycle::materialize<D>(real, prog, *record);
  const nvvmResult rc = real.nvvmVerifyProgram(prog, num_options, options);
  const platform::ErrnoGuard guard;
  try {
    std::string joined;
    bool captured = num_options >= 0 && (num_options == 0 || options != nullptr);
    for (int i = 0; captured && i < num_options; ++i) {
      if (options[i] == nullptr)
        captured = false;
      else
        joined.append(options[i]).push_back('\0');
    }
    if (record->completed || !captured) {
      not_capturable(*record, "nvvmVerifyProgram was called after the compile, or with NULL options");
    } else {
      lifecycle::record_input(*record, rc, kVerified, joined.data(), joined.size(), nullptr, false);
    }
  } catch (...) {
    not_capturable(*record, "a verification could not be recorded");
  }
  return rc;
}

nvvmResult nvvmGetCompiledResultSize(const RealNvvm& real, nvvmProgram prog, size_t* size) {
  return lifecycle::size_getter<D>(real, real.nvvmGetCompiledResultSize, prog, kResult, size);
}

nvvmResult nvvmGetCompiledResult(const RealNvvm& real, nvvmProgram prog, char* buffer) {
  return lifecycle::data_getter<D>(real, real.nvvmGetCompiledResult, prog, kResult, buffer);
}

nvvmResult nvvmGetProgramLogSize(const RealNvvm& real, nvvmProgram prog, size_t* size) {
  return lifecycle::size_getter<D>(real, real.nvvmGetProgramLogSize, prog, kLog, size);
}

nvvmResult nvvmGetProgramLog(const RealNvvm& real, nvvmProgram prog, char* buffer) {
  return lifecycle::data_getter<D>(real, real.nvvmGetProgramLog, prog, kLog, buffer);
}

}  // namespace nvrtc_cache::shim::hooks
