// The proxy's DllMain: nothing where the proxy is found as nvrtc64_130_0.dll (beside the program or
// on PATH: it loads the real DLL lazily, shim/windows/real_dll.h); loaded by the launcher as its
// injected copy (shim/windows/process_injection.h), it installs the loader redirection
// (shim/windows/loader_redirect.h) before the program's code runs.
#include <windows.h>

#include "shim/windows/loader_redirect.h"

extern "C" BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID) {
  if (reason != DLL_PROCESS_ATTACH) return TRUE;
  try {
    if (nvrtc_cache::shim::windows::loaded_as_injected_proxy(instance)) {
      nvrtc_cache::shim::windows::install_loader_redirect(instance);
    }
  } catch (...) {
  }
  return TRUE;
}

// Marks the proxy (the loader redirection never forwards to a proxy the program loads itself).
extern "C" int nvrtc_cache_proxy() { return 1; }
