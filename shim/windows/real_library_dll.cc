#include "shim/windows/real_library_dll.h"

#include <string>

#include "platform/windows/last_error.h"
#include "shim/windows/real_dll_candidates.h"

namespace nvrtc_cache::shim::windows {

HMODULE load_real_library(const wchar_t* variable, const wchar_t* dll_name) noexcept {
  const platform::windows::LastErrorKept last_error;
  try {
    for (const std::wstring& candidate : real_dll_candidates(variable, dll_name)) {
      if (!is_absolute_windows_path(candidate) || !is_existing_file(candidate)) continue;
      // Its own dependencies are looked for beside it first.
      const HMODULE module = LoadLibraryExW(candidate.c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
      if (module == nullptr) continue;
      if (GetProcAddress(module, "nvrtc_cache_standin") != nullptr) {  // a stand-in, not the real library
        FreeLibrary(module);
        continue;
      }
      return module;
    }
  } catch (...) {
  }
  return nullptr;
}

void* function_of(HMODULE module, const char* name) noexcept {
  if (module == nullptr) return nullptr;
  const platform::windows::LastErrorKept last_error;
  return reinterpret_cast<void*>(GetProcAddress(module, name));
}

}  // namespace nvrtc_cache::shim::windows
