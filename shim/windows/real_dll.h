// real_dll: finds and loads the real nvrtc64_130_0.dll for the proxy DLL of the same name, lazily (on
// the first NVRTC call, never in DllMain) and by ABSOLUTE path only, so the DLL search order that
// picked the proxy can never hand it back. Where it looks, first found wins:
//   1. NVRTC_CACHE_REAL_NVRTC: the real DLL's path (or the directory holding it);
//   2. %CUDA_PATH%\bin\x64 and %CUDA_PATH%\bin (the CUDA toolkit);
//   3. the NVRTC wheel of a Python on PATH (DIR\python.exe, or DIR\..\ for a venv's Scripts):
//      Lib\site-packages\nvidia\cu13\bin\x86_64 and ...\cu13\bin.
// A candidate that is the proxy itself (same file, or the same module once loaded) is skipped. The
// builtins DLLs beside the real one (nvrtc-builtins64_*.dll) are loaded with it, by absolute path,
// so NVRTC's own by-name load of them finds them even where their directory is not on PATH.
// Under the launcher (`nvrtc-cache.exe run`, shim/windows/loader_redirect.h) the real DLL is instead
// the one the program itself loaded, bound with bind_real_nvrtc before any call through the proxy;
// the candidates are then never searched.
// Contract: thread-safe (one real DLL per process, chosen once); never throws; leaves the
// thread's last-error value as it found it; the real DLL is never unloaded. Returns nullptr when no
// real NVRTC could be loaded (the proxy then fails open with NVRTC's own error codes).
#pragma once

#include <windows.h>

#include <string>

#include "libraries/nvrtc/real_nvrtc.h"

namespace nvrtc_cache::shim::windows {

// The real NVRTC's table; its identity (nvrtcVersion, and the PE header's link stamp, image size and
// checksum as its build id) is filled at the first call, with its builtins DLLs loaded.
const interpose::RealNvrtc* real_nvrtc_dll();
// The loaded real DLL's module (nullptr when none).
HMODULE real_nvrtc_module();
// Makes `module` (a real NVRTC the program loaded) the one the proxy forwards to, unless another is
// already chosen. True when `module` is the proxy's real DLL (now or already). Takes no loader
// lock and loads nothing (callable from DllMain); the builtins beside it are loaded at the first call.
bool bind_real_nvrtc(HMODULE module);
// The chosen real DLL without choosing one (nullptr while none is).
HMODULE bound_real_nvrtc_module();

}  // namespace nvrtc_cache::shim::windows
