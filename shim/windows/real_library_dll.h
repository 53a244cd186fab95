// real_library_dll: finds and loads a real library's DLL for the proxy (nvJitLink_130_0.dll,
// nvvm64_40_0.dll; NVRTC's has its launcher binding too: shim/windows/real_dll.h), by absolute path
// only, first found wins (shim/windows/real_dll_candidates.h: `variable`, the CUDA toolkit, the CUDA 13
// wheels of each Python on PATH), skipping the proxy's stand-ins (a DLL exporting nvrtc_cache_standin).
// Contract: thread-safe; never throws; leaves the thread's last-error value as it found it; what it
// loads is never unloaded. nullptr when no candidate loads.
#pragma once

#include <windows.h>

#include <memory>

#include "platform/windows/last_error.h"

namespace nvrtc_cache::shim::windows {

HMODULE load_real_library(const wchar_t* variable, const wchar_t* dll_name) noexcept;
// GetProcAddress, keeping the last-error value; nullptr without a module.
void* function_of(HMODULE module, const char* name) noexcept;

// A real library's DLL and its function table.
template <typename Real>
struct RealLibraryDll {
  HMODULE module = nullptr;
  Real functions;
};

// Loads `dll_name` (load_real_library) and has `fill` fill its table and identity; nullptr when no
// candidate loads or `fill` finds it unusable. What it returns is never freed (each library keeps it
// in a function-local static: loaded once per process).
template <typename Real>
const RealLibraryDll<Real>* load_real_library_table(const wchar_t* variable, const wchar_t* dll_name,
                                                    bool (*fill)(HMODULE module, Real& table)) noexcept {
  const platform::windows::LastErrorKept last_error;
  try {
    const HMODULE module = load_real_library(variable, dll_name);
    if (module == nullptr) return nullptr;
    auto loaded = std::make_unique<RealLibraryDll<Real>>();
    loaded->module = module;
    if (!fill(module, loaded->functions)) return nullptr;
    return loaded.release();
  } catch (...) {
    return nullptr;
  }
}

}  // namespace nvrtc_cache::shim::windows
