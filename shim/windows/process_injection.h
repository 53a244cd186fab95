// process_injection: loads the proxy DLL into a process created suspended, before its program's code
// runs, for the launcher (`nvrtc-cache.exe run`, tools/windows/run_command.cc) and for the children
// the program starts (shim/windows/loader_redirect.h). The technique: a remote thread started at
// KERNEL32's LoadLibraryW with the DLL's path written into the process. In a process that has not
// run yet, that thread is the first to run: the loader initialises the process on it (the program's
// static imports loaded and their DllMain run), then loads the DLL, whose DllMain installs the
// loader redirection; only then is the main thread resumed (by the caller), so the program's entry
// point and everything after it run redirected. Works the same under Wine and on Windows.
// The injected file is the proxy under another name (kInjectedProxyName, installed beside
// nvrtc64_130_0.dll), so that the program's own loads of nvrtc64_130_0.dll — by name, whatever
// the search flags — still resolve, through the loader, to the file they would without it.
// Contract: never throws; keeps the thread's last-error value; a 32-bit (WOW64) process, or one whose
// remote thread fails or does not finish within the timeout, is left as it is (not injected) with
// the reason in `why`. The caller resumes the main thread either way.
#pragma once

#include <windows.h>

#include <string>

namespace nvrtc_cache::shim::windows {

inline constexpr const wchar_t* kInjectedProxyName = L"nvrtc-cache-inject64.dll";

// Loads `dll` (an absolute path) into `process` (opened with the rights CreateProcess gives).
bool inject_dll(HANDLE process, const std::wstring& dll, std::string* why);

}  // namespace nvrtc_cache::shim::windows
