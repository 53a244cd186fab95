// libNVVM's function names as this build knows them, the same on every OS: a library exporting an
// nvvm* or __nvvm* function the table (libraries/nvvm/api.def) and this list do not know is not
// cached. Used by the real tables of Linux (real_nvvm.cc) and Windows (libraries/nvvm/windows_real_dll.cc).
// Contract: pure; thread-safe; never throws.
#pragma once

#include <string_view>

namespace nvrtc_cache::shim::interpose {

// The table's rows and what libNVVM 13.0 exports beside them (nvvmVersion, nvvmIRVersion,
// nvvmGetErrorString, nvvmDisableConcurrentAPI, __nvvmHandle, __nvvmHandleTarget).
bool is_known_nvvm_function(std::string_view name);

}  // namespace nvrtc_cache::shim::interpose
