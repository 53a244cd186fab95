// loader_redirect: what the proxy does inside a program started by `nvrtc-cache.exe run` (it is then
// loaded as kInjectedProxyName, shim/windows/process_injection.h): every NVRTC call the program makes
// into a real nvrtc64_130_0.dll, however that DLL was loaded, goes through the proxy's cache instead.
// The program's loads are never changed: LoadLibrary* resolves exactly as it would without the cache
// (by name, by full path, with any search flags, through an intermediate DLL or an import table)
// and returns the real module; the first real nvrtc64_130_0.dll that appears in the process becomes
// the proxy's real DLL (bind_real_nvrtc, shim/windows/real_dll.h), and from then on
//   - GetProcAddress on that module answers with the proxy's function of the same name (the
//     real one's where the proxy has none),
//   - import address tables that bind nvrtc64_130_0.dll's functions to it are rebound to the proxy's,
// through the import-table seam of shim/windows/import_table_patch.h, in every module of the
// process but the loader's own (ntdll, kernel32, kernelbase), the proxy and NVRTC's DLLs. The same
// seam points each module's imports of LoadLibraryA/W, LoadLibraryExA/W, GetProcAddress and
// CreateProcessA/W at hooks (and GetProcAddress hands the hooks out for those names, as Python's
// ctypes asks for them): after each load the modules it brought in are patched; a process the
// program starts is created suspended and the proxy injected into it the same way.
// Not redirected: another NVRTC major (nvrtc64_120_0.dll: the proxy serves 13's ABI), a second real
// nvrtc64_130_0.dll from another file once one is bound, a proxy nvrtc64_130_0.dll the program
// itself loads (it caches on its own), and functions found without the hooked entry points (an
// ordinal, or a loader reached through ntdll directly).
// Contract: install_loader_redirect is called once, from the injected DLL's DllMain (under the
// loader lock); every walk over the modules holds the loader lock (LdrLockLoaderLock), so loads on
// other threads wait for it; the hooks keep each real function's result and last-error value and
// never throw; a child that cannot be injected runs uncached (logged once).
#pragma once

#include <windows.h>

namespace nvrtc_cache::shim::windows {

// True when this module was loaded as the launcher's injected copy (its file name).
bool loaded_as_injected_proxy(HMODULE self);
// Hooks the loaded modules' imports and binds a real NVRTC already loaded (an import-linked one).
void install_loader_redirect(HMODULE self);

}  // namespace nvrtc_cache::shim::windows
