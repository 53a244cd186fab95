// Where the C runtimes differ: the reentrant forms of strerror and localtime (glibc's strerror_r and
// localtime_r; the Windows CRT's strerror_s and localtime_s).
// Contract: thread-safe (no static buffer is shared); fork-safe; no filesystem access; never throw
// except std::bad_alloc. Implementations, chosen by the build: c_runtime_posix.cc and
// c_runtime_windows.cc.
#pragma once

#include <ctime>
#include <string>

namespace nvrtc_cache::platform {

// The system's message for an errno value ("No such file or directory"); Windows: "error N" when
// the CRT has none.
std::string error_message(int errno_value);

// `time` in the local time zone.
std::tm local_time(std::time_t time);

}  // namespace nvrtc_cache::platform
