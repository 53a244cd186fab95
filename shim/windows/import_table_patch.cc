#include "shim/windows/import_table_patch.h"

#include <atomic>
#include <cstring>

namespace nvrtc_cache::shim::windows {
namespace {

std::atomic<ImportObserver> g_observer{nullptr};

// A string a hook reports, converted to UTF-8 on the hook's stack.
constexpr std::size_t kUtf8Bytes = 8192;
constexpr std::size_t kWideChars = 4096;

struct Utf8 {
  char text[kUtf8Bytes];
  const char* ptr = nullptr;
  bool too_long = false;
};

void from_wide(Utf8& out, const wchar_t* wide) {
  if (wide == nullptr) return;
  if (WideCharToMultiByte(CP_UTF8, 0, wide, -1, out.text, static_cast<int>(kUtf8Bytes), nullptr, nullptr) > 0) {
    out.ptr = out.text;
  } else {
    out.too_long = true;
  }
}

// `code_page`: CP_ACP, or the file APIs' page (CP_OEMCP where AreFileApisANSI() is false).
void from_narrow(Utf8& out, const char* narrow, UINT code_page) {
  if (narrow == nullptr) return;
  wchar_t wide[kWideChars];
  if (MultiByteToWideChar(code_page, 0, narrow, -1, wide, static_cast<int>(kWideChars)) > 0) {
    from_wide(out, wide);
  } else {
    out.too_long = true;
  }
}

UINT file_code_page() { return AreFileApisANSI() ? CP_ACP : CP_OEMCP; }

// Reports one call; the thread's last error is as the real function left it, before and after.
void report(const char* function, ImportEventKind kind, bool succeeded, bool for_writing, const Utf8* subject,
            const Utf8* value, const void* caller) {
  const ImportObserver observer = g_observer.load(std::memory_order_acquire);
  if (observer == nullptr) return;
  const DWORD last_error = GetLastError();
  ImportEvent event{function,
                    kind,
                    succeeded,
                    for_writing,
                    subject != nullptr && subject->too_long,
                    subject ? subject->ptr : nullptr,
                    value ? value->ptr : nullptr,
                    caller};
  observer(event);
  SetLastError(last_error);
}

bool watching() { return g_observer.load(std::memory_order_acquire) != nullptr; }

bool opens_for_writing(DWORD access, DWORD disposition) {
  constexpr DWORD kWrites = GENERIC_WRITE | GENERIC_ALL | FILE_WRITE_DATA | FILE_APPEND_DATA;
  return (access & kWrites) != 0 || disposition == CREATE_ALWAYS || disposition == CREATE_NEW ||
         disposition == OPEN_ALWAYS || disposition == TRUNCATE_EXISTING;
}

#define NVRTC_CACHE_CALLER __builtin_return_address(0)

// The hooks: the real KERNEL32 function (through this module's own, unpatched, imports), then the
// report. Each keeps the real function's result and last error.
HANDLE WINAPI hook_CreateFileA(LPCSTR name, DWORD access, DWORD share, LPSECURITY_ATTRIBUTES security,
                               DWORD disposition, DWORD flags, HANDLE template_file) {
  const HANDLE result = CreateFileA(name, access, share, security, disposition, flags, template_file);
  if (!watching()) return result;
  Utf8 subject;
  from_narrow(subject, name, file_code_page());
  report("CreateFileA", ImportEventKind::kOpen, result != INVALID_HANDLE_VALUE, opens_for_writing(access, disposition),
         &subject, nullptr, NVRTC_CACHE_CALLER);
  return result;
}

HANDLE WINAPI hook_CreateFileW(LPCWSTR name, DWORD access, DWORD share, LPSECURITY_ATTRIBUTES security,
                               DWORD disposition, DWORD flags, HANDLE template_file) {
  const HANDLE result = CreateFileW(name, access, share, security, disposition, flags, template_file);
  if (!watching()) return result;
  Utf8 subject;
  from_wide(subject, name);
  report("CreateFileW", ImportEventKind::kOpen, result != INVALID_HANDLE_VALUE, opens_for_writing(access, disposition),
         &subject, nullptr, NVRTC_CACHE_CALLER);
  return result;
}

DWORD WINAPI hook_GetFileAttributesA(LPCSTR name) {
  const DWORD result = GetFileAttributesA(name);
  if (!watching()) return result;
  Utf8 subject;
  from_narrow(subject, name, file_code_page());
  report("GetFileAttributesA", ImportEventKind::kStat, result != INVALID_FILE_ATTRIBUTES, false, &subject, nullptr,
         NVRTC_CACHE_CALLER);
  return result;
}

DWORD WINAPI hook_GetFileAttributesW(LPCWSTR name) {
  const DWORD result = GetFileAttributesW(name);
  if (!watching()) return result;
  Utf8 subject;
  from_wide(subject, name);
  report("GetFileAttributesW", ImportEventKind::kStat, result != INVALID_FILE_ATTRIBUTES, false, &subject, nullptr,
         NVRTC_CACHE_CALLER);
  return result;
}

UINT WINAPI hook_GetDriveTypeW(LPCWSTR root) {
  const UINT result = GetDriveTypeW(root);
  if (!watching()) return result;
  Utf8 subject;
  from_wide(subject, root);
  report("GetDriveTypeW", ImportEventKind::kStat, result != DRIVE_UNKNOWN && result != DRIVE_NO_ROOT_DIR, false,
         &subject, nullptr, NVRTC_CACHE_CALLER);
  return result;
}

HANDLE WINAPI hook_FindFirstFileExW(LPCWSTR pattern, FINDEX_INFO_LEVELS level, LPVOID data, FINDEX_SEARCH_OPS op,
                                    LPVOID filter, DWORD flags) {
  const HANDLE result = FindFirstFileExW(pattern, level, data, op, filter, flags);
  if (!watching()) return result;
  Utf8 subject;
  from_wide(subject, pattern);
  report("FindFirstFileExW", ImportEventKind::kList, result != INVALID_HANDLE_VALUE, false, &subject, nullptr,
         NVRTC_CACHE_CALLER);
  return result;
}

DWORD WINAPI hook_GetFullPathNameW(LPCWSTR name, DWORD length, LPWSTR buffer, LPWSTR* file_part) {
  const DWORD result = GetFullPathNameW(name, length, buffer, file_part);
  if (!watching()) return result;
  Utf8 subject, value;
  from_wide(subject, name);
  if (result > 0 && result < length) from_wide(value, buffer);
  report("GetFullPathNameW", ImportEventKind::kResolve, result > 0, false, &subject, &value, NVRTC_CACHE_CALLER);
  return result;
}

BOOL WINAPI hook_GetVolumePathNameW(LPCWSTR name, LPWSTR buffer, DWORD length) {
  const BOOL result = GetVolumePathNameW(name, buffer, length);
  if (!watching()) return result;
  Utf8 subject, value;
  from_wide(subject, name);
  if (result) from_wide(value, buffer);
  report("GetVolumePathNameW", ImportEventKind::kResolve, result != FALSE, false, &subject, &value, NVRTC_CACHE_CALLER);
  return result;
}

DWORD WINAPI hook_SearchPathW(LPCWSTR path, LPCWSTR file, LPCWSTR extension, DWORD length, LPWSTR buffer,
                              LPWSTR* file_part) {
  const DWORD result = SearchPathW(path, file, extension, length, buffer, file_part);
  if (!watching()) return result;
  Utf8 subject, value;
  from_wide(subject, file);
  if (result > 0 && result < length) from_wide(value, buffer);
  report("SearchPathW", ImportEventKind::kResolve, result > 0, false, &subject, &value, NVRTC_CACHE_CALLER);
  return result;
}

DWORD WINAPI hook_GetTempPathA(DWORD length, LPSTR buffer) {
  const DWORD result = GetTempPathA(length, buffer);
  if (!watching()) return result;
  Utf8 value;
  if (result > 0 && result < length) from_narrow(value, buffer, file_code_page());
  report("GetTempPathA", ImportEventKind::kTempPath, result > 0, false, nullptr, &value, NVRTC_CACHE_CALLER);
  return result;
}

DWORD WINAPI hook_GetEnvironmentVariableA(LPCSTR name, LPSTR buffer, DWORD size) {
  const DWORD result = GetEnvironmentVariableA(name, buffer, size);
  if (!watching()) return result;
  const bool set = result != 0 || GetLastError() != ERROR_ENVVAR_NOT_FOUND;
  Utf8 subject, value;
  from_narrow(subject, name, CP_ACP);
  if (result < size && buffer != nullptr && set) from_narrow(value, buffer, CP_ACP);
  report("GetEnvironmentVariableA", ImportEventKind::kGetenv, set, false, &subject, &value, NVRTC_CACHE_CALLER);
  return result;
}

DWORD WINAPI hook_GetEnvironmentVariableW(LPCWSTR name, LPWSTR buffer, DWORD size) {
  const DWORD result = GetEnvironmentVariableW(name, buffer, size);
  if (!watching()) return result;
  const bool set = result != 0 || GetLastError() != ERROR_ENVVAR_NOT_FOUND;
  Utf8 subject, value;
  from_wide(subject, name);
  if (result < size && buffer != nullptr && set) from_wide(value, buffer);
  report("GetEnvironmentVariableW", ImportEventKind::kGetenv, set, false, &subject, &value, NVRTC_CACHE_CALLER);
  return result;
}

DWORD WINAPI hook_ExpandEnvironmentStringsW(LPCWSTR source, LPWSTR destination, DWORD size) {
  const DWORD result = ExpandEnvironmentStringsW(source, destination, size);
  if (!watching()) return result;
  Utf8 subject, value;
  from_wide(subject, source);
  if (result > 0 && result <= size && destination != nullptr) from_wide(value, destination);
  report("ExpandEnvironmentStringsW", ImportEventKind::kExpandEnvironment, result > 0, false, &subject, &value,
         NVRTC_CACHE_CALLER);
  return result;
}

LPWCH WINAPI hook_GetEnvironmentStringsW() {
  const LPWCH result = GetEnvironmentStringsW();
  if (!watching()) return result;
  report("GetEnvironmentStringsW", ImportEventKind::kEnvironmentBlock, result != nullptr, false, nullptr, nullptr,
         NVRTC_CACHE_CALLER);
  return result;
}

BOOL WINAPI hook_SetCurrentDirectoryW(LPCWSTR directory) {
  const BOOL result = SetCurrentDirectoryW(directory);
  if (!watching()) return result;
  Utf8 subject;
  from_wide(subject, directory);
  report("SetCurrentDirectoryW", ImportEventKind::kChangedDirectory, result != FALSE, false, &subject, nullptr,
         NVRTC_CACHE_CALLER);
  return result;
}

BOOL WINAPI hook_CreateProcessW(LPCWSTR application, LPWSTR command_line, LPSECURITY_ATTRIBUTES process_security,
                                LPSECURITY_ATTRIBUTES thread_security, BOOL inherit, DWORD flags, LPVOID environment,
                                LPCWSTR directory, LPSTARTUPINFOW startup, LPPROCESS_INFORMATION information) {
  const BOOL result = CreateProcessW(application, command_line, process_security, thread_security, inherit, flags,
                                     environment, directory, startup, information);
  if (!watching()) return result;
  Utf8 subject;
  from_wide(subject, application != nullptr ? application : command_line);
  report("CreateProcessW", ImportEventKind::kStartedProgram, result != FALSE, false, &subject, nullptr,
         NVRTC_CACHE_CALLER);
  return result;
}

struct Hooked {
  WatchedKernel32 watched;
  void* hook;
};

const Hooked kHooked[] = {
#define NVRTC_CACHE_KERNEL32(name, kind) {{#name, ImportEventKind::kind}, reinterpret_cast<void*>(&hook_##name)},
#include "shim/windows/watched_kernel32.def"
#undef NVRTC_CACHE_KERNEL32
};
static_assert(sizeof(kHooked) / sizeof(kHooked[0]) == kWatchedKernel32Count);

const WatchedKernel32 kWatched[] = {
#define NVRTC_CACHE_KERNEL32(name, kind) {#name, ImportEventKind::kind},
#include "shim/windows/watched_kernel32.def"
#undef NVRTC_CACHE_KERNEL32
};

SRWLOCK g_patch_lock = SRWLOCK_INIT;

// One IAT slot: point it at `hook` if it holds `real`.
void patch_slot(ULONG_PTR* slot, void* real, void* hook, ImportTablePatch& patch) {
  void* const current = reinterpret_cast<void*>(*slot);
  if (current == hook) {
    ++patch.already;
    return;
  }
  if (real == nullptr || current != real) {
    ++patch.left;
    return;
  }
  if (!replace_import_slot(slot, real, hook)) {
    ++patch.left;
    return;
  }
  ++patch.redirected;
}

}  // namespace

void set_import_observer(ImportObserver observer) { g_observer.store(observer, std::memory_order_release); }

const WatchedKernel32* watched_kernel32() { return kWatched; }

bool for_each_import_slot(HMODULE module, const ImportSlotVisitor& visit) {
  if (module == nullptr) return false;
  auto* const base = reinterpret_cast<BYTE*>(module);
  const auto* dos = reinterpret_cast<const IMAGE_DOS_HEADER*>(base);
  if (dos->e_magic != IMAGE_DOS_SIGNATURE) return false;
  const auto* nt = reinterpret_cast<const IMAGE_NT_HEADERS64*>(base + dos->e_lfanew);
  if (nt->Signature != IMAGE_NT_SIGNATURE || nt->OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR64_MAGIC ||
      nt->OptionalHeader.NumberOfRvaAndSizes <= IMAGE_DIRECTORY_ENTRY_IMPORT) {
    return false;
  }
  const IMAGE_DATA_DIRECTORY& imports = nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
  if (imports.VirtualAddress == 0) return false;
  for (auto* descriptor = reinterpret_cast<const IMAGE_IMPORT_DESCRIPTOR*>(base + imports.VirtualAddress);
       descriptor->Name != 0; ++descriptor) {
    // Names come from the lookup table; without one (a bound, name-less table) nothing is visited.
    if (descriptor->OriginalFirstThunk == 0) continue;
    const char* const dll = reinterpret_cast<const char*>(base + descriptor->Name);
    const auto* names = reinterpret_cast<const IMAGE_THUNK_DATA64*>(base + descriptor->OriginalFirstThunk);
    auto* slots = reinterpret_cast<IMAGE_THUNK_DATA64*>(base + descriptor->FirstThunk);
    for (std::size_t i = 0; names[i].u1.AddressOfData != 0; ++i) {
      if (IMAGE_SNAP_BY_ORDINAL64(names[i].u1.Ordinal)) continue;
      const auto* by_name = reinterpret_cast<const IMAGE_IMPORT_BY_NAME*>(base + names[i].u1.AddressOfData);
      visit(dll, reinterpret_cast<const char*>(by_name->Name), reinterpret_cast<ULONG_PTR*>(&slots[i].u1.Function));
    }
  }
  return true;
}

bool replace_import_slot(ULONG_PTR* slot, void* expected, void* replacement) {
  if (reinterpret_cast<void*>(*slot) != expected) return false;
  DWORD old_protection = 0;
  if (!VirtualProtect(slot, sizeof *slot, PAGE_READWRITE, &old_protection)) return false;
  const bool replaced = InterlockedCompareExchangePointer(reinterpret_cast<void* volatile*>(slot), replacement,
                                                          expected) == expected;
  VirtualProtect(slot, sizeof *slot, old_protection, &old_protection);
  return replaced;
}

ImportTablePatch install_import_watch(HMODULE real_nvrtc) {
  ImportTablePatch patch;
  if (real_nvrtc == nullptr) return patch;
  const DWORD last_error = GetLastError();
  AcquireSRWLockExclusive(&g_patch_lock);
  if (HMODULE kernel32 = GetModuleHandleW(L"kernel32.dll")) {
    patch.parsed = for_each_import_slot(real_nvrtc, [&](const char* dll, const char* name, ULONG_PTR* slot) {
      if (_stricmp(dll, "KERNEL32.dll") != 0) return;
      for (const Hooked& hooked : kHooked) {
        if (std::strcmp(hooked.watched.name, name) != 0) continue;
        void* const real = reinterpret_cast<void*>(GetProcAddress(kernel32, name));
        patch_slot(slot, real, hooked.hook, patch);
        break;
      }
    });
  }
  ReleaseSRWLockExclusive(&g_patch_lock);
  SetLastError(last_error);
  return patch;
}

}  // namespace nvrtc_cache::shim::windows
