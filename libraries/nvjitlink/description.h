// nvJitLink described to the handle lifecycle (shim/lifecycle/handle_lifecycle.h): which return codes
// are kept, which options refuse caching (libraries/nvjitlink/options.h), its outputs (the linked
// CUBIN, PTX and LTO-IR — 13.1 on; 12.x's and 13.0's answer for it is "unavailable" — and the error
// and info logs) and how they are read back, and its completing call (nvJitLinkComplete). The hooks
// (libraries/nvjitlink/hooks.cc) and the lifecycle tests run it.
// Contract: stateless; thread-safe for distinct handles; the caller keeps its error state.
#pragma once

#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "keying/handle_inputs.h"
#include "libraries/nvjitlink/options.h"
#include "libraries/nvjitlink/real_nvjitlink.h"
#include "shim/lifecycle/handle_lifecycle.h"

namespace nvrtc_cache::shim {

// The outputs, in core::outputs_of(JitLibrary::nvjitlink)'s order.
enum NvJitLinkOutput : std::size_t { kCubin, kPtx, kLtoir, kErrorLog, kInfoLog };

struct NvJitLinkDescription {
  using Real = interpose::RealNvJitLink;
  using Handle = nvJitLinkHandle;
  using Result = nvJitLinkResult;
  static constexpr core::JitLibrary kLibrary = core::JitLibrary::nvjitlink;
  static constexpr std::string_view kSchema = keying::kLinkKeySchema;
  static constexpr const char* kWhat = "link";

  // Success and the errors its inputs and options decide; an internal or thread-pool error may not
  // happen again.
  static bool cacheable(Result rc) {
    return core::is_known_result(kLibrary, rc) && rc != NVJITLINK_ERROR_INTERNAL && rc != NVJITLINK_ERROR_THREADPOOL;
  }

  static std::optional<keying::OptionRefusal> options_not_cacheable(const HandleRecord& record) {
    return keying::link_options_not_cacheable(record.inputs.options, record.inputs.library.major,
                                              record.inputs.library.minor);
  }

  static const void* code(const Real& real) { return reinterpret_cast<const void*>(real.nvJitLinkComplete); }

  static std::optional<std::vector<core::RecordedOutput>> read_outputs(const Real& real, Handle handle) {
    std::vector<core::RecordedOutput> outputs;
    for (auto output :
         {handle_lifecycle::read_back(handle, real.nvJitLinkGetLinkedCubinSize, real.nvJitLinkGetLinkedCubin),
          handle_lifecycle::read_back(handle, real.nvJitLinkGetLinkedPtxSize, real.nvJitLinkGetLinkedPtx),
          real.nvJitLinkGetLinkedLTOIRSize && real.nvJitLinkGetLinkedLTOIR
              ? handle_lifecycle::read_back(handle, real.nvJitLinkGetLinkedLTOIRSize, real.nvJitLinkGetLinkedLTOIR)
              : std::optional<core::RecordedOutput>(core::unavailable_output()),
          handle_lifecycle::read_back(handle, real.nvJitLinkGetErrorLogSize, real.nvJitLinkGetErrorLog),
          handle_lifecycle::read_back(handle, real.nvJitLinkGetInfoLogSize, real.nvJitLinkGetInfoLog)}) {
      if (!output) return std::nullopt;
      outputs.push_back(std::move(*output));
    }
    return outputs;
  }

  static Result run_recorded(const Real& real, Handle handle, const HandleRecord&) {
    return real.nvJitLinkComplete(handle);
  }
};
}  // namespace nvrtc_cache::shim
