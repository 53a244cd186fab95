// Where the real nvrtc64_130_0.dll is looked for, in order (shim/windows/real_dll.h says why): for the
// proxy, which loads the first that loads and is not itself, and for `nvrtc-cache.exe doctor`, which
// says which one that is. Absolute paths only; a candidate may not exist.
// Contract: thread-safe; reads the process environment; never throws except std::bad_alloc.
#pragma once

#include <string>
#include <vector>

namespace nvrtc_cache::shim::windows {

inline constexpr const wchar_t* kRealNvrtcDllName = L"nvrtc64_130_0.dll";

std::vector<std::wstring> real_nvrtc_candidates();
bool is_absolute_windows_path(const std::wstring& path);
bool is_existing_file(const std::wstring& path);

}  // namespace nvrtc_cache::shim::windows
