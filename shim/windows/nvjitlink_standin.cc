// The stand-in nvJitLink_130_0.dll of the Windows proxy: nvJitLink 13.0's every export (each row of
// libraries/nvjitlink/api.def that 13.0 has, under its plain name and as __<name>_13_0, with
// nvJitLinkVersion and the private __nvJitLinkAPI: shim/windows/nvJitLink_130_0.def.in), each
// forwarded to the proxy core, so that a process's links and compiles share one runtime, one store
// and one set of counters. The core is the proxy nvrtc64_130_0.dll (or the launcher's
// nvrtc-cache-inject64.dll) the process has loaded already, else the nvrtc64_130_0.dll beside this
// DLL, loaded by absolute path; it answers through its nvrtc_cache_<function> exports
// (libraries/nvjitlink/windows_exports.cc). Without a core, each call goes straight to the real
// nvJitLink (shim/windows/real_nvjitlink_dll.h), uncached; without either, NVJITLINK_ERROR_INTERNAL.
// The export nvrtc_cache_standin tells this DLL from a real nvJitLink.
// Contract: thread-safe (each function resolved once, the core chosen once); the thread's last-error
// value is kept across the resolution; nothing runs in DllMain.
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <windows.h>

#include <string>

#include "platform/windows/last_error.h"
#include "shim/windows/module_identity.h"
#include "shim/windows/module_path.h"
#include "shim/windows/real_nvjitlink_dll.h"

extern "C" {
extern const int nvrtc_cache_standin;
const int nvrtc_cache_standin = 1;
}

namespace {

bool is_core(HMODULE module) { return module != nullptr && GetProcAddress(module, "nvrtc_cache_proxy") != nullptr; }

HMODULE core_beside_this_dll() {
  std::wstring path = nvrtc_cache::shim::windows::module_path(
      nvrtc_cache::shim::windows::module_containing(reinterpret_cast<const void*>(&core_beside_this_dll)));
  const std::size_t slash = path.find_last_of(L"\\/");
  if (slash == std::wstring::npos) return nullptr;
  path = path.substr(0, slash + 1) + L"nvrtc64_130_0.dll";
  const HMODULE module = LoadLibraryExW(path.c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
  if (is_core(module)) return module;
  if (module != nullptr) FreeLibrary(module);
  return nullptr;
}

HMODULE core() {
  static const HMODULE module = [] {
    const nvrtc_cache::platform::windows::LastErrorKept last_error;
    try {
      for (const wchar_t* name : {L"nvrtc-cache-inject64.dll", L"nvrtc64_130_0.dll"}) {
        if (const HMODULE loaded = GetModuleHandleW(name); is_core(loaded)) return loaded;
      }
      return core_beside_this_dll();
    } catch (...) {
      return static_cast<HMODULE>(nullptr);
    }
  }();
  return module;
}

// The core's `core_name`, or else the real nvJitLink's `name`.
void* resolve(const char* core_name, const char* name) {
  if (const HMODULE c = core()) {
    const nvrtc_cache::platform::windows::LastErrorKept last_error;
    return reinterpret_cast<void*>(GetProcAddress(c, core_name));
  }
  return nvrtc_cache::shim::windows::real_nvjitlink_function(name);
}

// A function of the real nvJitLink the cache does not handle, through the core (which loaded it).
void* passed(const char* name) {
  if (const HMODULE c = core()) {
    using Passed = void* (*)(const char*);
    const nvrtc_cache::platform::windows::LastErrorKept last_error;
    const auto through_core =
        reinterpret_cast<Passed>(reinterpret_cast<void*>(GetProcAddress(c, "nvrtc_cache_nvjitlink_function")));
    return through_core != nullptr ? through_core(name) : nullptr;
  }
  return nvrtc_cache::shim::windows::real_nvjitlink_function(name);
}

}  // namespace

#define HANDLE_LIBRARY_API(kind, ret, name, params, args)                                          \
  extern "C" ret name params {                                                                     \
    using Fn = ret(*) params;                                                                      \
    static const Fn fn = reinterpret_cast<Fn>(resolve("nvrtc_cache_" #name, #name));               \
    if (fn == nullptr) return NVJITLINK_ERROR_INTERNAL;                                            \
    return fn args;                                                                                \
  }
#define NVJITLINK_API_SINCE_13_1(kind, ret, name, params, args)  // not in nvJitLink 13.0
#include "libraries/nvjitlink/api.def"
#undef NVJITLINK_API_SINCE_13_1
#undef HANDLE_LIBRARY_API

extern "C" nvJitLinkResult nvJitLinkVersion(unsigned int* major, unsigned int* minor) {
  using Fn = nvJitLinkResult (*)(unsigned int*, unsigned int*);
  static const Fn fn = reinterpret_cast<Fn>(passed("nvJitLinkVersion"));
  return fn != nullptr ? fn(major, minor) : NVJITLINK_ERROR_INTERNAL;
}

// For the private forwarder (shim/windows/nvjitlink_private_forwarder.S).
extern "C" void* nvrtc_cache_standin_private() {
  static void* const fn = passed("__nvJitLinkAPI");
  return fn;
}
