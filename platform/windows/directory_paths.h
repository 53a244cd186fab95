// The Windows Env's directory descriptors (platform/env_windows.cc) as paths, for the other Windows
// halves of platform/ that work in such a directory (file_at_windows.cc). Windows only.
// Contract: thread-safe; never throws except std::bad_alloc; the thread's last-error value is kept.
#pragma once

#include <windows.h>

#include <string>

namespace nvrtc_cache::platform::windows {

// The entry `name` of the directory descriptor `dir`, by the directory handle's current path (or
// `name` as given for AT_FDCWD); "" with *error (EBADF) when `dir` is no descriptor.
std::wstring path_in_directory(int dir, const std::string& name, int* error);
// A Win32 error as the errno value the Env reports for it.
int errno_of_error(DWORD error);
// The sharing every handle of the Env and its companions grants: read, write and delete.
inline constexpr DWORD kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

}  // namespace nvrtc_cache::platform::windows
