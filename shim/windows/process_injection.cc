#include "shim/windows/process_injection.h"

#include <string>

namespace nvrtc_cache::shim::windows {
namespace {

constexpr DWORD kLoadTimeoutMs = 60'000;

std::string error_text(const char* what, DWORD error) { return std::string(what) + " (error " + std::to_string(error) + ")"; }

bool inject(HANDLE process, const std::wstring& dll, std::string* why) {
  BOOL wow64 = FALSE;
  if (IsWow64Process(process, &wow64) && wow64) {
    *why = "it is a 32-bit program (the cache is 64-bit)";
    return false;
  }
  const HMODULE kernel32 = GetModuleHandleW(L"kernel32.dll");
  const auto load_library = reinterpret_cast<LPTHREAD_START_ROUTINE>(
      reinterpret_cast<void*>(kernel32 != nullptr ? GetProcAddress(kernel32, "LoadLibraryW") : nullptr));
  if (load_library == nullptr) {
    *why = error_text("LoadLibraryW not found", GetLastError());
    return false;
  }
  const SIZE_T bytes = (dll.size() + 1) * sizeof(wchar_t);
  void* const remote = VirtualAllocEx(process, nullptr, bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
  if (remote == nullptr) {
    *why = error_text("VirtualAllocEx failed", GetLastError());
    return false;
  }
  bool loaded = false;
  SIZE_T written = 0;
  if (!WriteProcessMemory(process, remote, dll.c_str(), bytes, &written) || written != bytes) {
    *why = error_text("WriteProcessMemory failed", GetLastError());
  } else if (const HANDLE thread = CreateRemoteThread(process, nullptr, 0, load_library, remote, 0, nullptr)) {
    const DWORD waited = WaitForSingleObject(thread, kLoadTimeoutMs);
    DWORD module_low_bits = 0;
    if (waited != WAIT_OBJECT_0) {
      *why = "the DLL's load did not finish in time";
    } else if (!GetExitCodeThread(thread, &module_low_bits) || module_low_bits == 0) {
      *why = "LoadLibraryW failed in the program's process";
    } else {
      loaded = true;
    }
    CloseHandle(thread);
    // A load still running keeps reading the path: its memory is then left allocated.
    if (waited != WAIT_OBJECT_0) return false;
  } else {
    *why = error_text("CreateRemoteThread failed", GetLastError());
  }
  VirtualFreeEx(process, remote, 0, MEM_RELEASE);
  return loaded;
}

}  // namespace

bool inject_dll(HANDLE process, const std::wstring& dll, std::string* why) {
  const DWORD last_error = GetLastError();
  bool ok = false;
  try {
    ok = inject(process, dll, why);
  } catch (...) {
    ok = false;
  }
  SetLastError(last_error);
  return ok;
}

}  // namespace nvrtc_cache::shim::windows
