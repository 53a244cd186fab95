// real_library_dll: finds and loads a real library's DLL for the proxy (nvJitLink_130_0.dll,
// nvvm64_40_0.dll; NVRTC's has its launcher binding too: shim/windows/real_dll.h), by absolute path
// only, first found wins (shim/windows/real_dll_candidates.h: `variable`, the CUDA toolkit, the CUDA 13
// wheels of each Python on PATH), skipping the proxy's stand-ins (a DLL exporting nvrtc_cache_standin).
// Contract: thread-safe; never throws; leaves the thread's last-error value as it found it; what it
// loads is never unloaded. nullptr when no candidate loads.
#pragma once

#include <windows.h>

namespace nvrtc_cache::shim::windows {

HMODULE load_real_library(const wchar_t* variable, const wchar_t* dll_name) noexcept;
// GetProcAddress, keeping the last-error value; nullptr without a module.
void* function_of(HMODULE module, const char* name) noexcept;

}  // namespace nvrtc_cache::shim::windows
