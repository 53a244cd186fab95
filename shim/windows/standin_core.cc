#include "shim/windows/standin_core.h"

#include <string>

#include "platform/windows/last_error.h"
#include "shim/windows/module_identity.h"
#include "shim/windows/module_path.h"

// What tells a stand-in from the real library it stands in for (exported by each stand-in's .def).
extern "C" {
extern const int nvrtc_cache_standin;
const int nvrtc_cache_standin = 1;
}

namespace nvrtc_cache::shim::windows {
namespace {

bool is_core(HMODULE module) { return module != nullptr && GetProcAddress(module, "nvrtc_cache_proxy") != nullptr; }

HMODULE core_beside_this_dll() {
  std::wstring path = module_path(module_containing(reinterpret_cast<const void*>(&core_beside_this_dll)));
  const std::size_t slash = path.find_last_of(L"\\/");
  if (slash == std::wstring::npos) return nullptr;
  path = path.substr(0, slash + 1) + L"nvrtc64_130_0.dll";
  const HMODULE module = LoadLibraryExW(path.c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
  if (is_core(module)) return module;
  if (module != nullptr) FreeLibrary(module);
  return nullptr;
}

}  // namespace

HMODULE standin_core() {
  static const HMODULE module = [] {
    const platform::windows::LastErrorKept last_error;
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

void* core_or_real(const char* core_name, const char* name, void* (*fallback)(const char* name)) {
  if (const HMODULE core = standin_core()) {
    const platform::windows::LastErrorKept last_error;
    return reinterpret_cast<void*>(GetProcAddress(core, core_name));
  }
  return fallback(name);
}

void* passed_through_core(const char* passer, const char* name, void* (*fallback)(const char* name)) {
  if (const HMODULE core = standin_core()) {
    using Passer = void* (*)(const char*);
    const platform::windows::LastErrorKept last_error;
    const auto through_core = reinterpret_cast<Passer>(reinterpret_cast<void*>(GetProcAddress(core, passer)));
    return through_core != nullptr ? through_core(name) : nullptr;
  }
  return fallback(name);
}

}  // namespace nvrtc_cache::shim::windows
