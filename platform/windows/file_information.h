// struct stat from a Win32 handle, and the errno values the Windows Env reports for Win32 errors
// (platform/env_windows.cc and the other Windows halves of platform/). struct stat gets the volume
// serial number and the 64-bit file index spread over st_dev, st_ino, st_uid, st_gid and st_rdev
// (platform/env.h's file_id()), the size in 64 bits and one-second times; a reparse point is S_IFLNK.
// Windows only.
// Contract: thread-safe; never throws; sets the thread's last-error value (the callers keep it).
#pragma once

#include <windows.h>

#include <string>

#include "platform/env.h"  // struct stat, S_IFLNK

namespace nvrtc_cache::platform::windows {

// Opens `path` for attributes only; `follow`: through a reparse point to its target.
HANDLE open_for_attributes(const std::wstring& path, bool follow, DWORD access = FILE_READ_ATTRIBUTES);
// The stat of an open handle; `volume`: the serial number of the volume `handle` is known to be on
// (0: not known, asked, about a millisecond under Wine). 0 or an errno value.
int stat_of(HANDLE handle, struct stat* out, DWORD volume = 0);
// The stat of `path` (`follow`: through a reparse point). 0 or an errno value.
int stat_path(const std::wstring& path, bool follow, struct stat* out, DWORD volume = 0);

}  // namespace nvrtc_cache::platform::windows
