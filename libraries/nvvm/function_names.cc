#include "libraries/nvvm/function_names.h"

#include <nvvm.h>

#include "libraries/nvvm/real_nvvm.h"

namespace nvrtc_cache::shim::interpose {
namespace {

// What libNVVM 13.0 exports beside the table's rows (passed through, never cached).
constexpr std::string_view kOtherKnownFunctions[] = {"nvvmVersion",        "nvvmIRVersion",
                                                     "nvvmGetErrorString", "nvvmDisableConcurrentAPI",
                                                     "__nvvmHandle",       "__nvvmHandleTarget"};

}  // namespace

bool is_known_nvvm_function(std::string_view name) {
  for (std::string_view known : kOtherKnownFunctions) {
    if (name == known) return true;
  }
#define HANDLE_LIBRARY_API(kind, ret, fn, params, args) \
  if (name == #fn) return true;
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API
  return false;
}

}  // namespace nvrtc_cache::shim::interpose
