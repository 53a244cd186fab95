// UTF-8 <-> UTF-16 for the Windows port (paths and environment variables) and the environment read
// by name (the process's environment block, not the CRT's copy). Windows only.
// Contract: pure functions apart from reading the environment; thread-safe; fork: none on Windows;
// no filesystem access; an invalid sequence converts to an empty string; the thread's last-error
// value is kept; may throw std::bad_alloc only.
#pragma once

#include <windows.h>

#include <optional>
#include <string>
#include <string_view>

namespace nvrtc_cache::platform::windows {

inline std::wstring to_wide(std::string_view utf8) {
  if (utf8.empty()) return {};
  const int n = MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n > 0 ? n : 0), L'\0');
  if (n > 0) MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), out.data(), n);
  return out;
}

inline std::string to_utf8(std::wstring_view wide) {
  if (wide.empty()) return {};
  const int n =
      WideCharToMultiByte(CP_UTF8, 0, wide.data(), static_cast<int>(wide.size()), nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(n > 0 ? n : 0), '\0');
  if (n > 0) {
    WideCharToMultiByte(CP_UTF8, 0, wide.data(), static_cast<int>(wide.size()), out.data(), n, nullptr, nullptr);
  }
  return out;
}

// The variable's value in UTF-8, or nullopt when it is not set; the thread's last error is kept.
inline std::optional<std::string> environment_variable(const std::wstring& name) {
  const DWORD last_error = GetLastError();
  std::wstring value(128, L'\0');
  for (;;) {
    SetLastError(ERROR_SUCCESS);
    const DWORD n = GetEnvironmentVariableW(name.c_str(), value.data(), static_cast<DWORD>(value.size()));
    if (n == 0 && GetLastError() == ERROR_ENVVAR_NOT_FOUND) {
      SetLastError(last_error);
      return std::nullopt;
    }
    if (n < value.size()) {
      value.resize(n);
      break;
    }
    value.resize(n);
  }
  SetLastError(last_error);
  return to_utf8(value);
}

}  // namespace nvrtc_cache::platform::windows
