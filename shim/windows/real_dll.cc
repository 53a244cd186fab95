#include "shim/windows/real_dll.h"

#include "shim/windows/module_identity.h"
#include "shim/windows/module_path.h"
#include "shim/windows/real_dll_candidates.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace nvrtc_cache::shim::windows {
namespace {

HMODULE own_module() {
  HMODULE self = nullptr;
  GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                     reinterpret_cast<LPCWSTR>(&own_module), &self);
  return self;
}

// The identity of a file (volume and index), to tell the proxy's own file from the real one.
std::wstring own_path() { return module_path(own_module()); }

// NVRTC loads its builtins DLL by name at its first compile, which the DLL search order finds only
// where the real DLL's directory is on PATH; loaded here by absolute path from beside the real DLL,
// the by-name load finds the module already loaded.
void preload_builtins(const std::wstring& real_path) {
  const std::size_t slash = real_path.find_last_of(L"\\/");
  if (slash == std::wstring::npos) return;
  const std::wstring dir = real_path.substr(0, slash + 1);
  WIN32_FIND_DATAW found;
  const HANDLE search = FindFirstFileW((dir + L"nvrtc-builtins64_*.dll").c_str(), &found);
  if (search == INVALID_HANDLE_VALUE) return;
  do {
    if (GetModuleHandleW(found.cFileName) == nullptr) {
      LoadLibraryExW((dir + found.cFileName).c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
    }
  } while (FindNextFileW(search, &found));
  FindClose(search);
}

HMODULE load_real() {
  const std::wstring self = own_path();
  const HMODULE self_module = own_module();
  for (const std::wstring& candidate : real_nvrtc_candidates()) {
    if (!is_absolute_windows_path(candidate) || !is_existing_file(candidate)) continue;
    if (!self.empty() && same_file(candidate, self)) continue;
    // Its own dependencies are looked for beside it first.
    const HMODULE module = LoadLibraryExW(candidate.c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (module == nullptr) continue;
    if (module == self_module) {
      FreeLibrary(module);
      continue;
    }
    return module;
  }
  return nullptr;
}

struct Loaded {
  HMODULE module = nullptr;
  interpose::RealNvrtc functions;
  // The first call through it (never in DllMain, where a bound DLL is chosen): its identity, and the
  // builtins DLLs beside it loaded.
  std::once_flag first_call_once;
};

Loaded* resolve(HMODULE module) {
  auto* out = new Loaded();  // leaked: the real DLL is never unloaded
  out->module = module;
#define NVRTC_API(kind, ret, name, params, args) \
  out->functions.name = reinterpret_cast<ret(*) params>(reinterpret_cast<void*>(GetProcAddress(module, #name)));
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
  out->functions.private_functions[0] = reinterpret_cast<void*>(GetProcAddress(module, "__nvrtcCPEx"));
  return out;
}

SRWLOCK g_lock = SRWLOCK_INIT;
std::atomic<Loaded*> g_loaded{nullptr};
bool g_searched = false;  // under g_lock: the candidates were tried (nothing found)

// The real DLL: the one bound by the launcher's loader redirection, else the first candidate.
Loaded* loaded() {
  if (Loaded* l = g_loaded.load(std::memory_order_acquire)) return l;
  const DWORD last_error = GetLastError();
  AcquireSRWLockExclusive(&g_lock);
  Loaded* l = g_loaded.load(std::memory_order_acquire);
  if (l == nullptr && !g_searched) {
    g_searched = true;
    try {
      if (const HMODULE module = load_real()) {
        Loaded* fresh = resolve(module);
        Loaded* expected = nullptr;
        // A real DLL bound meanwhile (bind_real_nvrtc) wins; the one found here stays loaded, unused.
        if (g_loaded.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
          l = fresh;
        } else {
          delete fresh;
          l = expected;
        }
      }
    } catch (...) {
      l = nullptr;
    }
  }
  ReleaseSRWLockExclusive(&g_lock);
  SetLastError(last_error);
  return l;
}

}  // namespace

const interpose::RealNvrtc* real_nvrtc_dll() {
  Loaded* const l = loaded();
  if (l == nullptr) return nullptr;
  std::call_once(l->first_call_once, [l] {
    const DWORD last_error = GetLastError();
    try {
      keying::LibraryIdentity& identity = l->functions.identity;
      if (l->functions.nvrtcVersion) l->functions.nvrtcVersion(&identity.major, &identity.minor);
      identity.build_id = pe_build_id(l->module);
      preload_builtins(module_path(l->module));
    } catch (...) {
    }
    SetLastError(last_error);
  });
  return &l->functions;
}

HMODULE real_nvrtc_module() {
  Loaded* const l = loaded();
  return l != nullptr ? l->module : nullptr;
}

HMODULE bound_real_nvrtc_module() {
  Loaded* const l = g_loaded.load(std::memory_order_acquire);
  return l != nullptr ? l->module : nullptr;
}

// Lock-free (no g_lock): it runs under the loader lock, which loaded() may wait for while holding g_lock.
bool bind_real_nvrtc(HMODULE module) {
  if (module == nullptr || module == own_module()) return false;
  if (Loaded* l = g_loaded.load(std::memory_order_acquire)) return l->module == module;
  const DWORD last_error = GetLastError();
  Loaded* fresh = nullptr;
  try {
    fresh = resolve(module);
  } catch (...) {
    SetLastError(last_error);
    return false;
  }
  Loaded* expected = nullptr;
  const bool bound = g_loaded.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel);
  if (!bound) delete fresh;
  SetLastError(last_error);
  return bound || expected->module == module;
}

}  // namespace nvrtc_cache::shim::windows
