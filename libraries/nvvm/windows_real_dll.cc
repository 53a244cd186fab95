#include "libraries/nvvm/windows_real_dll.h"

#include <string>

#include "libraries/nvvm/function_names.h"
#include "shim/windows/module_identity.h"
#include "shim/windows/real_library_dll.h"

namespace nvrtc_cache::shim::windows {
namespace {

bool fill(HMODULE module, interpose::RealNvvm& real) {
  using Version = nvvmResult (*)(int*, int*);
  using IrVersion = nvvmResult (*)(int*, int*, int*, int*);
  const auto version = reinterpret_cast<Version>(function_of(module, "nvvmVersion"));
  int major = 0, minor = 0, dbg_major = 0, dbg_minor = 0;
  if (version == nullptr || version(&major, &minor) != NVVM_SUCCESS) return false;
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) \
  real.name = reinterpret_cast<ret(*) params>(function_of(module, #name));
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API
  if (const auto ir_version = reinterpret_cast<IrVersion>(function_of(module, "nvvmIRVersion"))) {
    (void)ir_version(&real.ir_major, &real.ir_minor, &dbg_major, &dbg_minor);
  }
  real.identity.major = major;
  real.identity.minor = minor;
  real.identity.build_id = pe_build_id(module);
  for (const char* prefix : {"nvvm", "__nvvm"}) {
    for (const std::string& name : exported_names(module, prefix)) {
      if (!interpose::is_known_nvvm_function(name)) real.unknown_functions.push_back(name);
    }
  }
  return true;
}

const RealLibraryDll<interpose::RealNvvm>* loaded() {
  static const auto* const l =
      load_real_library_table<interpose::RealNvvm>(L"NVRTC_CACHE_REAL_NVVM", kRealNvvmDllName, &fill);
  return l;
}

}  // namespace

const interpose::RealNvvm* real_nvvm_dll() {
  const auto* const l = loaded();
  return l != nullptr && l->functions.nvvmCreateProgram != nullptr ? &l->functions : nullptr;
}

HMODULE real_nvvm_module() {
  const auto* const l = loaded();
  return l != nullptr ? l->module : nullptr;
}

void* real_nvvm_function(const char* name) { return function_of(real_nvvm_module(), name); }

}  // namespace nvrtc_cache::shim::windows
