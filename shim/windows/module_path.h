// module_path: the full path of a loaded module (nullptr: the process's .exe), for the proxy's
// search of the real DLL, the launcher's injected DLL and its children. Windows only.
// Contract: thread-safe; "" when it cannot be read; may throw std::bad_alloc only; the thread's
// last-error value is changed only on failure.
#pragma once

#include <windows.h>

#include <string>

namespace nvrtc_cache::shim::windows {

inline std::wstring module_path(HMODULE module) {
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetModuleFileNameW(module, path.data(), static_cast<DWORD>(path.size()));
    if (n == 0) return {};
    if (n < path.size()) {
      path.resize(n);
      return path;
    }
    path.resize(path.size() * 2);
  }
}

}  // namespace nvrtc_cache::shim::windows
