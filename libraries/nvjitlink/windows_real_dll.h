// real_nvjitlink_dll: the real nvJitLink_130_0.dll for the proxy's nvJitLink exports
// (libraries/nvjitlink/windows_exports.cc, reached through the stand-in nvJitLink_130_0.dll that
// forwards to them, libraries/nvjitlink/windows_standin.cc), loaded lazily, on the first nvJitLink call
// (shim/windows/real_library_dll.h: NVRTC_CACHE_REAL_NVJITLINK, the DLL or its directory, first).
// Its table is filled by name; its identity is nvJitLinkVersion's and the PE header's; the nvJitLink
// functions it exports that this build does not know are listed (its links are then not cached).
// Contract: thread-safe (one real DLL per process, chosen once); never throws; leaves the thread's
// last-error value as it found it; the real DLL is never unloaded. Returns nullptr when none could be
// loaded (the exports then answer NVJITLINK_ERROR_INTERNAL: there is no nvJitLink to pass to).
#pragma once

#include <windows.h>

#include "libraries/nvjitlink/real_nvjitlink.h"

namespace nvrtc_cache::shim::windows {

inline constexpr const wchar_t* kRealNvJitLinkDllName = L"nvJitLink_130_0.dll";

const interpose::RealNvJitLink* real_nvjitlink_dll();
// The loaded real DLL's module (nullptr when none).
HMODULE real_nvjitlink_module();
// The real DLL's function `name` outside the table (nvJitLinkVersion, __nvJitLinkAPI), or nullptr.
void* real_nvjitlink_function(const char* name);

}  // namespace nvrtc_cache::shim::windows
