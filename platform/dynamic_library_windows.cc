#include "platform/dynamic_library.h"

#include <windows.h>

#include "platform/windows/wide.h"

namespace nvrtc_cache::platform {

void* load_library(const std::string& path, std::string* error) {
  const HMODULE module = LoadLibraryExW(windows::to_wide(path).c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
  if (module == nullptr) *error = "LoadLibraryExW failed: error " + std::to_string(GetLastError());
  return reinterpret_cast<void*>(module);
}

void* library_function(void* library, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library), name));
}

}  // namespace nvrtc_cache::platform
