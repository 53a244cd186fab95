// real_nvvm_dll: the real nvvm64_40_0.dll for the proxy's libNVVM exports
// (libraries/nvvm/windows_exports.cc, reached through the stand-in nvvm64_40_0.dll that forwards to
// them, libraries/nvvm/windows_standin.cc), loaded lazily, on the first libNVVM call
// (shim/windows/real_library_dll.h: NVRTC_CACHE_REAL_NVVM, the DLL or its directory, first). Its
// table is filled by name; its identity is nvvmVersion's (with nvvmIRVersion's) and the PE header's;
// the libNVVM functions it exports that this build does not know are listed (not cached then).
// Contract: thread-safe (one real DLL per process, chosen once); never throws; leaves the thread's
// last-error value as it found it; the real DLL is never unloaded. Returns nullptr when none could be
// loaded (the exports then answer NVVM_ERROR_PROGRAM_CREATION_FAILURE: there is no libNVVM to pass to).
#pragma once

#include <windows.h>

#include "libraries/nvvm/real_nvvm.h"

namespace nvrtc_cache::shim::windows {

inline constexpr const wchar_t* kRealNvvmDllName = L"nvvm64_40_0.dll";

const interpose::RealNvvm* real_nvvm_dll();
// The loaded real DLL's module (nullptr when none).
HMODULE real_nvvm_module();
// The real DLL's function `name` outside the table (nvvmVersion, __nvvmHandle, ...), or nullptr.
void* real_nvvm_function(const char* name);

}  // namespace nvrtc_cache::shim::windows
