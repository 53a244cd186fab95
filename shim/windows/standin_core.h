// What the proxy's stand-in DLLs share (nvJitLink_130_0.dll: libraries/nvjitlink/windows_standin.cc,
// nvvm64_40_0.dll: libraries/nvvm/windows_standin.cc): the proxy core they forward to — the proxy
// nvrtc64_130_0.dll (or the launcher's nvrtc-cache-inject64.dll) the process has loaded already, else
// the nvrtc64_130_0.dll beside the stand-in, loaded by absolute path — so that a process's compiles,
// links and NVVM compiles share one runtime, one store and one set of counters.
// Contract: thread-safe (the core chosen once); never throws; keeps the thread's last-error value;
// nothing runs in DllMain.
#pragma once

#include <windows.h>

namespace nvrtc_cache::shim::windows {

// The proxy core, or nullptr where there is none.
HMODULE standin_core();
// The core's export `core_name`, or else (no core) `fallback`'s answer for `name`: the real library's.
void* core_or_real(const char* core_name, const char* name, void* (*fallback)(const char* name));
// A function of the real library the cache does not handle (a version query, a private entry point),
// as the core's `passer` export (void* (const char*): nvrtc_cache_nvjitlink_function, ...) hands it
// out from the real library the core loaded, or else `fallback`'s.
void* passed_through_core(const char* passer, const char* name, void* (*fallback)(const char* name));

}  // namespace nvrtc_cache::shim::windows
