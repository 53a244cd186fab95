#include "shim/windows/loader_redirect.h"

#include <winternl.h>

#include <cstring>
#include <cwchar>
#include <string>
#include <vector>

#include "core/log.h"
#include "shim/windows/import_table_patch.h"
#include "shim/windows/module_path.h"
#include "shim/windows/process_injection.h"
#include "shim/windows/real_dll.h"
#include "shim/windows/runtime.h"

namespace nvrtc_cache::shim::windows {
namespace {

constexpr const char* kNvrtcDll = "nvrtc64_130_0.dll";
constexpr const char* kProxyMarker = "nvrtc_cache_proxy";  // exported by the proxy (nvrtc64_130_0.def.in)

HMODULE g_self = nullptr;
HMODULE g_kernel32 = nullptr;
HMODULE g_kernelbase = nullptr;
HMODULE g_ntdll = nullptr;

using LockLoader = LONG(NTAPI*)(ULONG flags, ULONG* disposition, ULONG_PTR* cookie);
using UnlockLoader = LONG(NTAPI*)(ULONG flags, ULONG_PTR cookie);
LockLoader g_lock_loader = nullptr;
UnlockLoader g_unlock_loader = nullptr;

// The loader lock (recursive): held by every walk over the modules and their patching.
class LoaderLockHeld {
 public:
  LoaderLockHeld() {
    if (g_lock_loader != nullptr) held_ = g_lock_loader(0, nullptr, &cookie_) >= 0;
  }
  ~LoaderLockHeld() {
    if (held_) g_unlock_loader(0, cookie_);
  }
  LoaderLockHeld(const LoaderLockHeld&) = delete;
  LoaderLockHeld& operator=(const LoaderLockHeld&) = delete;

 private:
  ULONG_PTR cookie_ = 0;
  bool held_ = false;
};

void* proc(HMODULE module, const char* name) {
  return module != nullptr ? reinterpret_cast<void*>(GetProcAddress(module, name)) : nullptr;
}

// The name a module's export directory gives itself ("" when none).
const char* export_name(HMODULE module) {
  const auto* base = reinterpret_cast<const BYTE*>(module);
  const auto* dos = reinterpret_cast<const IMAGE_DOS_HEADER*>(base);
  if (dos->e_magic != IMAGE_DOS_SIGNATURE) return "";
  const auto* nt = reinterpret_cast<const IMAGE_NT_HEADERS64*>(base + dos->e_lfanew);
  if (nt->Signature != IMAGE_NT_SIGNATURE || nt->OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR64_MAGIC ||
      nt->OptionalHeader.NumberOfRvaAndSizes <= IMAGE_DIRECTORY_ENTRY_EXPORT) {
    return "";
  }
  const IMAGE_DATA_DIRECTORY& exports = nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
  if (exports.VirtualAddress == 0) return "";
  const auto* directory = reinterpret_cast<const IMAGE_EXPORT_DIRECTORY*>(base + exports.VirtualAddress);
  return directory->Name != 0 ? reinterpret_cast<const char*>(base + directory->Name) : "";
}

// A real NVRTC 13 (not the proxy, here or loaded by the program itself).
bool is_real_nvrtc(HMODULE module) {
  return module != nullptr && module != g_self && _stricmp(export_name(module), kNvrtcDll) == 0 &&
         proc(module, kProxyMarker) == nullptr && proc(module, "nvrtcVersion") != nullptr;
}

// The real NVRTC the proxy forwards to, binding `module` if it is the first one seen.
bool serves(HMODULE module) {
  if (module == nullptr) return false;
  const HMODULE bound = bound_real_nvrtc_module();
  if (bound != nullptr) return module == bound;
  return is_real_nvrtc(module) && bind_real_nvrtc(module);
}

// The proxy's own function of this name, for a lookup in the real DLL it serves (nullptr: none).
void* proxy_function(const char* name) { return proc(g_self, name); }

bool data_only(DWORD flags) {
  return (flags & (LOAD_LIBRARY_AS_DATAFILE | LOAD_LIBRARY_AS_DATAFILE_EXCLUSIVE | LOAD_LIBRARY_AS_IMAGE_RESOURCE)) != 0;
}

void redirect_new_modules();

// Whether a load names an NVRTC DLL (its file name starts with nvrtc64_, with or without a directory).
template <typename Char>
bool names_nvrtc(const Char* name) {
  if (name == nullptr) return false;
  const Char* file = name;
  for (const Char* c = name; *c != 0; ++c) {
    if (*c == '\\' || *c == '/') file = c + 1;
  }
  constexpr char kPrefix[] = "nvrtc64_";
  for (std::size_t i = 0; i + 1 < sizeof kPrefix; ++i) {
    const Char c = file[i];
    const Char lower = c >= 'A' && c <= 'Z' ? static_cast<Char>(c - 'A' + 'a') : c;
    if (lower != static_cast<Char>(kPrefix[i])) return false;
  }
  return true;
}

// The program is loading NVRTC itself: the store starts opening now, while the real DLL loads
// (shim/windows/store_open_ahead.h), not at the program's first call, which comes after the load.
template <typename Char>
void open_store_ahead_if_nvrtc(const Char* name, DWORD flags = 0) {
  if (!data_only(flags) && names_nvrtc(name)) WindowsRuntime::open_store_ahead();
}

// The hooks. Each calls the real function through the proxy's own (unpatched) imports.
HMODULE WINAPI hook_LoadLibraryA(LPCSTR name) {
  open_store_ahead_if_nvrtc(name);
  const HMODULE result = LoadLibraryA(name);
  if (result != nullptr) redirect_new_modules();
  return result;
}

HMODULE WINAPI hook_LoadLibraryW(LPCWSTR name) {
  open_store_ahead_if_nvrtc(name);
  const HMODULE result = LoadLibraryW(name);
  if (result != nullptr) redirect_new_modules();
  return result;
}

HMODULE WINAPI hook_LoadLibraryExA(LPCSTR name, HANDLE file, DWORD flags) {
  open_store_ahead_if_nvrtc(name, flags);
  const HMODULE result = LoadLibraryExA(name, file, flags);
  if (result != nullptr && !data_only(flags)) redirect_new_modules();
  return result;
}

HMODULE WINAPI hook_LoadLibraryExW(LPCWSTR name, HANDLE file, DWORD flags) {
  open_store_ahead_if_nvrtc(name, flags);
  const HMODULE result = LoadLibraryExW(name, file, flags);
  if (result != nullptr && !data_only(flags)) redirect_new_modules();
  return result;
}

FARPROC WINAPI hook_GetProcAddress(HMODULE module, LPCSTR name);


// A child created suspended for the injection: injected, then resumed unless its creator asked for
// it suspended. A debugged child is not injected (the remote thread would wait on its debugger).
void inject_child(DWORD flags, const PROCESS_INFORMATION* information) {
  const DWORD last_error = GetLastError();
  try {
    if ((flags & (DEBUG_PROCESS | DEBUG_ONLY_THIS_PROCESS)) == 0) {
      std::string why;
      if (!inject_dll(information->hProcess, module_path(g_self), &why)) {
        core::log_once(core::LogLevel::kWarn, "inject-child",
                       "cannot load the cache into a program this one started (" + why + "); it runs uncached");
      }
    }
  } catch (...) {
  }
  if ((flags & CREATE_SUSPENDED) == 0) ResumeThread(information->hThread);
  SetLastError(last_error);
}

BOOL WINAPI hook_CreateProcessW(LPCWSTR application, LPWSTR command_line, LPSECURITY_ATTRIBUTES process_security,
                                LPSECURITY_ATTRIBUTES thread_security, BOOL inherit, DWORD flags, LPVOID environment,
                                LPCWSTR directory, LPSTARTUPINFOW startup, LPPROCESS_INFORMATION information) {
  const BOOL result = CreateProcessW(application, command_line, process_security, thread_security, inherit,
                                     flags | CREATE_SUSPENDED, environment, directory, startup, information);
  if (result) inject_child(flags, information);
  return result;
}

BOOL WINAPI hook_CreateProcessA(LPCSTR application, LPSTR command_line, LPSECURITY_ATTRIBUTES process_security,
                                LPSECURITY_ATTRIBUTES thread_security, BOOL inherit, DWORD flags, LPVOID environment,
                                LPCSTR directory, LPSTARTUPINFOA startup, LPPROCESS_INFORMATION information) {
  const BOOL result = CreateProcessA(application, command_line, process_security, thread_security, inherit,
                                     flags | CREATE_SUSPENDED, environment, directory, startup, information);
  if (result) inject_child(flags, information);
  return result;
}

struct LoaderHook {
  const char* name;
  void* hook;
  void* real[2];  // KERNEL32's export and KERNELBASE's (where one forwards to the other, both the same)
};

LoaderHook g_hooks[] = {
    {"LoadLibraryA", reinterpret_cast<void*>(&hook_LoadLibraryA), {}},
    {"LoadLibraryW", reinterpret_cast<void*>(&hook_LoadLibraryW), {}},
    {"LoadLibraryExA", reinterpret_cast<void*>(&hook_LoadLibraryExA), {}},
    {"LoadLibraryExW", reinterpret_cast<void*>(&hook_LoadLibraryExW), {}},
    {"GetProcAddress", reinterpret_cast<void*>(&hook_GetProcAddress), {}},
    {"CreateProcessA", reinterpret_cast<void*>(&hook_CreateProcessA), {}},
    {"CreateProcessW", reinterpret_cast<void*>(&hook_CreateProcessW), {}},
};

const LoaderHook* hook_for_real(void* address) {
  if (address == nullptr) return nullptr;
  for (const LoaderHook& hook : g_hooks) {
    if (address == hook.real[0] || address == hook.real[1]) return &hook;
  }
  return nullptr;
}

FARPROC WINAPI hook_GetProcAddress(HMODULE module, LPCSTR name) {
  const FARPROC result = GetProcAddress(module, name);
  if (result == nullptr || IS_INTRESOURCE(name)) return result;
  const DWORD last_error = GetLastError();
  void* answer = reinterpret_cast<void*>(result);
  if (const LoaderHook* hook = hook_for_real(answer)) {
    answer = hook->hook;
  } else if (serves(module)) {
    if (void* ours = proxy_function(name)) answer = ours;
  }
  SetLastError(last_error);
  return reinterpret_cast<FARPROC>(answer);
}

// Modules the walks have patched, by base (and the image's stamp and size, for a module loaded
// again where another was). Under the loader lock.
struct Visited {
  void* base;
  DWORD stamp;
  DWORD size;
};
std::vector<Visited>* g_visited = nullptr;  // leaked: walks may run from late threads

const IMAGE_NT_HEADERS64* nt_headers(void* base) {
  const auto* dos = reinterpret_cast<const IMAGE_DOS_HEADER*>(base);
  if (dos->e_magic != IMAGE_DOS_SIGNATURE) return nullptr;
  const auto* nt = reinterpret_cast<const IMAGE_NT_HEADERS64*>(static_cast<const BYTE*>(base) + dos->e_lfanew);
  return nt->Signature == IMAGE_NT_SIGNATURE ? nt : nullptr;
}

bool skipped(HMODULE module) {
  if (module == g_self || module == g_ntdll || module == g_kernel32 || module == g_kernelbase) return true;
  const char* name = export_name(module);
  return _strnicmp(name, "nvrtc64_", 8) == 0 || _strnicmp(name, "nvrtc-builtins64_", 17) == 0;
}

void patch_module(HMODULE module, HMODULE real) {
  for_each_import_slot(module, [real](const char* dll, const char* name, ULONG_PTR* slot) {
    void* const current = reinterpret_cast<void*>(*slot);
    if (_stricmp(dll, kNvrtcDll) == 0) {
      if (real == nullptr) return;
      void* const theirs = proc(real, name);
      void* const ours = proxy_function(name);
      if (theirs != nullptr && ours != nullptr && current == theirs) replace_import_slot(slot, theirs, ours);
      return;
    }
    if (const LoaderHook* hook = hook_for_real(current); hook != nullptr && std::strcmp(hook->name, name) == 0) {
      replace_import_slot(slot, current, hook->hook);
    }
  });
}

// The process's PEB (x64: the TEB's ProcessEnvironmentBlock, read through gs; NtCurrentTeb()
// inlined trips GCC's array-bounds check).
const PEB* current_peb() {
  const PEB* peb = nullptr;
  __asm__("movq %%gs:0x60, %0" : "=r"(peb));
  return peb;
}

// The loaded modules (the loader's in-memory-order list).
std::vector<HMODULE> loaded_modules() {
  std::vector<HMODULE> out;
  const PEB* peb = current_peb();
  if (peb == nullptr || peb->Ldr == nullptr) return out;
  const LIST_ENTRY* head = &peb->Ldr->InMemoryOrderModuleList;
  for (const LIST_ENTRY* link = head->Flink; link != nullptr && link != head; link = link->Flink) {
    const auto* entry = CONTAINING_RECORD(link, LDR_DATA_TABLE_ENTRY, InMemoryOrderLinks);
    if (entry->DllBase != nullptr) out.push_back(static_cast<HMODULE>(entry->DllBase));
  }
  return out;
}

void walk_modules() {
  const std::vector<HMODULE> modules = loaded_modules();
  // A real NVRTC first: the modules importing it are then rebound in the same walk.
  bool newly_bound = false;
  if (bound_real_nvrtc_module() == nullptr) {
    for (HMODULE module : modules) {
      if (is_real_nvrtc(module) && bind_real_nvrtc(module)) {
        newly_bound = true;
        break;
      }
    }
  }
  if (g_visited == nullptr) g_visited = new std::vector<Visited>();
  if (newly_bound) g_visited->clear();  // their NVRTC imports could not be rebound before
  const HMODULE real = bound_real_nvrtc_module();
  for (HMODULE module : modules) {
    const IMAGE_NT_HEADERS64* nt = nt_headers(module);
    if (nt == nullptr || skipped(module)) continue;
    const Visited visit{module, nt->FileHeader.TimeDateStamp, nt->OptionalHeader.SizeOfImage};
    bool seen = false;
    for (const Visited& v : *g_visited) {
      seen = v.base == visit.base && v.stamp == visit.stamp && v.size == visit.size;
      if (seen) break;
    }
    if (seen) continue;
    patch_module(module, real);
    g_visited->push_back(visit);
  }
  // Forget modules no longer loaded (another may come at their base).
  std::erase_if(*g_visited, [&](const Visited& v) {
    for (HMODULE module : modules) {
      if (module == v.base) return false;
    }
    return true;
  });
}

void redirect_new_modules() {
  const DWORD last_error = GetLastError();
  try {
    LoaderLockHeld lock;
    walk_modules();
  } catch (...) {
  }
  SetLastError(last_error);
}

}  // namespace

bool loaded_as_injected_proxy(HMODULE self) {
  const std::wstring path = module_path(self);
  const std::size_t slash = path.find_last_of(L"\\/");
  return _wcsicmp(path.c_str() + (slash == std::wstring::npos ? 0 : slash + 1), kInjectedProxyName) == 0;
}

void install_loader_redirect(HMODULE self) {
  const DWORD last_error = GetLastError();
  g_self = self;
  g_ntdll = GetModuleHandleW(L"ntdll.dll");
  g_kernel32 = GetModuleHandleW(L"kernel32.dll");
  g_kernelbase = GetModuleHandleW(L"kernelbase.dll");
  g_lock_loader = reinterpret_cast<LockLoader>(proc(g_ntdll, "LdrLockLoaderLock"));
  g_unlock_loader = reinterpret_cast<UnlockLoader>(proc(g_ntdll, "LdrUnlockLoaderLock"));
  if (g_unlock_loader == nullptr) g_lock_loader = nullptr;
  for (LoaderHook& hook : g_hooks) {
    hook.real[0] = proc(g_kernel32, hook.name);
    hook.real[1] = proc(g_kernelbase, hook.name);
  }
  SetLastError(last_error);
  redirect_new_modules();
}

}  // namespace nvrtc_cache::shim::windows
