// import_table_patch: observes what the Windows NVRTC reads from outside its C API inputs by
// patching ITS import address table (only that module's: the host's and every other module's imports
// stay untouched by the watch; under `nvrtc-cache.exe run` the loader redirection patches them through
// the same seam, for other functions, shim/windows/loader_redirect.h) for the KERNEL32 functions of shim/windows/watched_kernel32.def. Each hook calls the
// real function, then reports the path or variable it saw to the installed observer, and leaves the
// thread's last-error value as the real function set it. The Windows counterpart of shim/watch's
// GOT redirection (shim/watch/import_patch.h).
// The observer interface is this minimal portable one rather than shim/watch/recorder.h, which is
// POSIX-bound (initial-exec TLS, dirfd, errno): the proxy maps ImportEvent onto its compile watch
// (kOpen/kStat/kResolve/kGetenv onto direct::ObservationKind; kList, kChangedDirectory and
// kStartedProgram taint the compile as on Linux; kEnvironmentBlock, kExpandEnvironment and kTempPath
// are reads the record must vouch for or taint).
// Contract: install_import_watch serialises itself (a process-wide lock) and is idempotent per
// module (a slot that already holds the hook is left as it is; one bound to anything but the
// KERNEL32 function, e.g. another hooking library, is left alone and counted). Each slot is one
// aligned pointer store, made writable with VirtualProtect for the write and restored. The hooks run
// on any thread NVRTC calls from, allocate nothing, take no lock (the observer's own KERNEL32 calls
// are not observed: its module's imports are not patched), and convert wide paths to UTF-8 in a bounded stack buffer (a
// longer path is reported with subject == nullptr and subject_too_long set: the observer must taint).
#pragma once

#include <windows.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace nvrtc_cache::shim::windows {

enum class ImportEventKind : std::uint8_t {
  kOpen,               // CreateFile: subject = path
  kStat,               // attributes / drive type of subject
  kList,               // FindFirstFile: subject = the search pattern (a directory listing)
  kResolve,            // subject resolved (full path, volume, search) to value
  kGetenv,             // subject = variable name, value = its value when set
  kExpandEnvironment,  // subject = a string with %VARIABLES%, value = its expansion
  kEnvironmentBlock,   // the whole environment block was read (the C runtime's copy of it)
  kTempPath,           // the temporary directory (TMP/TEMP/USERPROFILE), value = result
  kChangedDirectory,   // SetCurrentDirectory: subject = the new directory
  kStartedProgram,     // CreateProcess: subject = the application or command line
};

struct ImportEvent {
  const char* function;  // the KERNEL32 function's name
  ImportEventKind kind;
  bool succeeded;         // the path existed / the variable was set / the call succeeded
  bool for_writing;       // kOpen: opened for writing or created
  bool subject_too_long;  // the subject did not fit the hook's buffer (subject is nullptr)
  const char* subject;    // UTF-8, NUL-terminated; nullptr when the call named none
  const char* value;      // UTF-8, NUL-terminated; nullptr when none
  const void* caller;     // return address of the call (inside the patched module)
};

// Called from inside the hooks (any thread; no allocation is required of it, but it may allocate:
// the hooks hold no lock). nullptr: the hooks only forward.
using ImportObserver = void (*)(const ImportEvent& event);
void set_import_observer(ImportObserver observer);

struct ImportTablePatch {
  int redirected = 0;   // IAT slots now holding a hook
  int already = 0;      // slots that held the hook already
  int left = 0;         // watched imports bound to something else, left alone
  bool parsed = false;  // the module's import directory was found and walked
};

// Patches `real_nvrtc`'s import address table (and no other module's). Call once the module is
// loaded, before its first compile; again for the builtins DLL it loads (same table).
ImportTablePatch install_import_watch(HMODULE real_nvrtc);

// The seam both import patches share (this watch, and the launcher's loader redirection,
// shim/windows/loader_redirect.h): calls `visit` for each by-name import slot of `module`'s import
// address table, with the importing DLL's name as the table spells it. False when the module has no
// import directory that could be read. The caller serialises its patches.
using ImportSlotVisitor = std::function<void(const char* dll, const char* name, ULONG_PTR* slot)>;
bool for_each_import_slot(HMODULE module, const ImportSlotVisitor& visit);
// One aligned pointer store into an import slot that holds `expected` (made writable for the
// write, then restored); false when it held something else or could not be written.
bool replace_import_slot(ULONG_PTR* slot, void* expected, void* replacement);

// The functions of watched_kernel32.def, in order (for tests).
struct WatchedKernel32 {
  const char* name;
  ImportEventKind kind;
};
inline constexpr std::size_t kWatchedKernel32Count = 0
#define NVRTC_CACHE_KERNEL32(name, kind) +1
#include "shim/windows/watched_kernel32.def"
#undef NVRTC_CACHE_KERNEL32
    ;
const WatchedKernel32* watched_kernel32();

}  // namespace nvrtc_cache::shim::windows
