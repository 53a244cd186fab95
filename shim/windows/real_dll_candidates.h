// Where a real library's DLL is looked for, in order (shim/windows/real_dll.h says why): for the
// proxy, which loads the first that loads and is not itself (nvrtc64_130_0.dll, nvJitLink_130_0.dll),
// and for `nvrtc-cache.exe doctor`, which says which one that is. Absolute paths only; a candidate
// may not exist.
// Contract: thread-safe; reads the process environment; never throws except std::bad_alloc.
#pragma once

#include <string>
#include <vector>

namespace nvrtc_cache::shim::windows {

inline constexpr const wchar_t* kRealNvrtcDllName = L"nvrtc64_130_0.dll";

// `dll_name` where `variable` names it (the DLL, or the directory holding it), in the CUDA toolkit
// (%CUDA_PATH%\bin\x64, %CUDA_PATH%\bin) and in the CUDA 13 wheels of each Python on PATH.
std::vector<std::wstring> real_dll_candidates(const wchar_t* variable, const wchar_t* dll_name);
// NVRTC_CACHE_REAL_NVRTC's, for nvrtc64_130_0.dll.
std::vector<std::wstring> real_nvrtc_candidates();
bool is_absolute_windows_path(const std::wstring& path);
bool is_existing_file(const std::wstring& path);

}  // namespace nvrtc_cache::shim::windows
