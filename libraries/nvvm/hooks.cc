// The hooks of libraries/nvvm/api.def over the handle lifecycle (shim/lifecycle/handle_lifecycle.h)
// and libNVVM's description (libraries/nvvm/description.h): a compile is keyed at nvvmCompileProgram
// from each module added (nvvmAddModuleToProgram, nvvmLazyAddModuleToProgram: its bytes, name and
// whether lazily) and the compile's options; a verification before the compile is keyed as an input
// (nvvmVerifyProgram below).
#include "libraries/nvvm/hooks.h"

#include <optional>
#include <string>
#include <vector>

#include "libraries/nvvm/description.h"
#include "shim/lifecycle/handle_lifecycle.h"

namespace nvrtc_cache::shim::hooks {
namespace {

namespace lifecycle = handle_lifecycle;
using interpose::RealNvvm;
using D = NvvmDescription;

nvvmResult add_module(const RealNvvm& real, nvvmProgram prog, const char* buffer, size_t size, const char* name,
                      bool lazy) {
  const auto add = lazy ? real.nvvmLazyAddModuleToProgram : real.nvvmAddModuleToProgram;
  std::shared_ptr<HandleRecord> record = lifecycle::record_of(jit_host(), prog);
  if (!record) return add(prog, buffer, size, name);
  lifecycle::materialize<D>(real, prog, *record);
  const nvvmResult rc = add(prog, buffer, size, name);
  lifecycle::record_input(*record, rc, lazy ? kLazyModule : kModule, buffer, size, name, false);
  return rc;
}

}  // namespace

nvvmResult nvvmCreateProgram(const RealNvvm& real, nvvmProgram* prog) {
  const nvvmResult rc = real.nvvmCreateProgram(prog);
  if (rc != NVVM_SUCCESS || prog == nullptr || *prog == nullptr || !jit_host().enabled()) return rc;
  lifecycle::record_created(*prog, D::kLibrary, real.identity, {}, true, "");
  return rc;
}

nvvmResult nvvmDestroyProgram(const RealNvvm& real, nvvmProgram* prog) {
  if (prog != nullptr && *prog != nullptr) {
    const platform::ErrorStateKept kept;
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
  if (std::shared_ptr<HandleRecord> record = lifecycle::record_of(jit_host(), prog); record && !record->completed) {
    const platform::ErrorStateKept kept;
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
  return lifecycle::complete<D>(jit_host(), real, prog,
                                [&] { return real.nvvmCompileProgram(prog, num_options, options); });
}

// Before the compile (cuda.core verifies every program it compiles), a verification joins the
// inputs: its options, in order, as one input of type kVerified (measured with 13.0: the compile's
// result and log are the same with and without it, but the key does not assume so). A failed one, or
// one after the compile (its log replaces the compile's: the served compile is first run for real),
// leaves the program uncached.
nvvmResult nvvmVerifyProgram(const RealNvvm& real, nvvmProgram prog, int num_options, const char** options) {
  std::shared_ptr<HandleRecord> record = lifecycle::record_of(jit_host(), prog);
  if (!record) return real.nvvmVerifyProgram(prog, num_options, options);
  lifecycle::materialize<D>(real, prog, *record);
  const nvvmResult rc = real.nvvmVerifyProgram(prog, num_options, options);
  const platform::ErrorStateKept kept;
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
