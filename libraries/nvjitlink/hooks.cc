// The hooks of libraries/nvjitlink/api.def, for nvJitLink 12.x and 13.x alike, over the handle lifecycle
// (shim/lifecycle/handle_lifecycle.h) and nvJitLink's description (libraries/nvjitlink/description.h):
// a link is keyed at nvJitLinkComplete from nvJitLinkCreate's options and each nvJitLinkAddData /
// nvJitLinkAddFile input (a file by its content, read before and after nvJitLink reads it).
#include "libraries/nvjitlink/hooks.h"

#include <optional>
#include <string>
#include <vector>

#include "libraries/nvjitlink/description.h"
#include "shim/lifecycle/handle_lifecycle.h"

namespace nvrtc_cache::shim::hooks {
namespace {

namespace lifecycle = handle_lifecycle;
using interpose::RealNvJitLink;
using D = NvJitLinkDescription;

}  // namespace

nvJitLinkResult nvJitLinkCreate(const RealNvJitLink& real, nvJitLinkHandle* handle, uint32_t num_options,
                                const char* const* options) {
  const nvJitLinkResult rc = real.nvJitLinkCreate(handle, num_options, options);
  if (rc != NVJITLINK_SUCCESS || handle == nullptr || *handle == nullptr || !jit_host().enabled()) return rc;
  std::vector<std::string> recorded;
  bool capturable = real.not_cacheable.empty() && (num_options == 0 || options != nullptr);
  try {
    for (uint32_t i = 0; capturable && i < num_options; ++i) {
      if (options[i] == nullptr)
        capturable = false;
      else
        recorded.emplace_back(options[i]);
    }
  } catch (...) {
    capturable = false;
  }
  lifecycle::record_created(
      *handle, D::kLibrary, real.identity, recorded, capturable,
      real.not_cacheable.empty() ? "an option was NULL" : real.not_cacheable,
      real.not_cacheable.empty() ? core::Counter::uncacheable_inputs : core::Counter::uncacheable_unsupported_version);
  return rc;
}

nvJitLinkResult nvJitLinkDestroy(const RealNvJitLink& real, nvJitLinkHandle* handle) {
  if (handle != nullptr && *handle != nullptr) {
    const platform::ErrorStateKept kept;
    handle_table().erase(*handle);
  }
  return real.nvJitLinkDestroy(handle);
}

nvJitLinkResult nvJitLinkAddData(const RealNvJitLink& real, nvJitLinkHandle handle, nvJitLinkInputType type,
                                 const void* data, size_t size, const char* name) {
  std::shared_ptr<HandleRecord> record = lifecycle::record_of(jit_host(), handle);
  if (!record) return real.nvJitLinkAddData(handle, type, data, size, name);
  lifecycle::materialize<D>(real, handle, *record);
  const nvJitLinkResult rc = real.nvJitLinkAddData(handle, type, data, size, name);
  lifecycle::record_input(*record, rc, type, data, size, name, false);
  return rc;
}

nvJitLinkResult nvJitLinkAddFile(const RealNvJitLink& real, nvJitLinkHandle handle, nvJitLinkInputType type,
                                 const char* file_name) {
  std::shared_ptr<HandleRecord> record = lifecycle::record_of(jit_host(), handle);
  if (!record) return real.nvJitLinkAddFile(handle, type, file_name);
  lifecycle::materialize<D>(real, handle, *record);
  std::optional<std::string> before;
  {
    const platform::ErrorStateKept kept;
    try {
      if (record->capturable && file_name != nullptr) before = lifecycle::read_regular_file(file_name);
    } catch (...) {
      before.reset();
    }
  }
  const nvJitLinkResult rc = real.nvJitLinkAddFile(handle, type, file_name);
  if (rc != NVJITLINK_SUCCESS || !record->capturable) {
    lifecycle::record_input(*record, rc, type, nullptr, 0, file_name, true);
    return rc;
  }
  const platform::ErrorStateKept kept;
  try {
    // The file as nvJitLink read it: the same bytes before and after its read, or not cached.
    std::optional<std::string> after = file_name ? lifecycle::read_regular_file(file_name) : std::nullopt;
    if (!before || !after || *before != *after) {
      not_capturable(*record, std::string("the file ") + (file_name ? file_name : "(null)") +
                                  " could not be read, or changed while nvJitLink read it");
    } else {
      lifecycle::record_input(*record, rc, type, after->data(), after->size(), file_name, true);
    }
  } catch (...) {
    not_capturable(*record, "an input file could not be recorded");
  }
  return rc;
}

nvJitLinkResult nvJitLinkComplete(const RealNvJitLink& real, nvJitLinkHandle handle) {
  return lifecycle::complete<D>(jit_host(), real, handle, [&] { return real.nvJitLinkComplete(handle); });
}

#define NVRTC_CACHE_LINK_GETTERS(X)                                     \
  X(nvJitLinkGetLinkedCubinSize, nvJitLinkGetLinkedCubin, void, kCubin) \
  X(nvJitLinkGetLinkedPtxSize, nvJitLinkGetLinkedPtx, char, kPtx)       \
  X(nvJitLinkGetLinkedLTOIRSize, nvJitLinkGetLinkedLTOIR, char, kLtoir) \
  X(nvJitLinkGetErrorLogSize, nvJitLinkGetErrorLog, char, kErrorLog)    \
  X(nvJitLinkGetInfoLogSize, nvJitLinkGetInfoLog, char, kInfoLog)

#define NVRTC_CACHE_DEFINE_GETTERS(size_name, data_name, Data, index)                          \
  nvJitLinkResult size_name(const RealNvJitLink& real, nvJitLinkHandle handle, size_t* size) { \
    return lifecycle::size_getter<D>(real, real.size_name, handle, index, size);               \
  }                                                                                            \
  nvJitLinkResult data_name(const RealNvJitLink& real, nvJitLinkHandle handle, Data* out) {    \
    return lifecycle::data_getter<D>(real, real.data_name, handle, index, out);                \
  }
NVRTC_CACHE_LINK_GETTERS(NVRTC_CACHE_DEFINE_GETTERS)
#undef NVRTC_CACHE_DEFINE_GETTERS
#undef NVRTC_CACHE_LINK_GETTERS

}  // namespace nvrtc_cache::shim::hooks
