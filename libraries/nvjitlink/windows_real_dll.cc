#include "libraries/nvjitlink/windows_real_dll.h"

#include <string>

#include "libraries/nvjitlink/function_names.h"
#include "shim/windows/module_identity.h"
#include "shim/windows/real_library_dll.h"

namespace nvrtc_cache::shim::windows {
namespace {

bool fill(HMODULE module, interpose::RealNvJitLink& real) {
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) \
  real.name = reinterpret_cast<ret(*) params>(function_of(module, #name));
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
  real.identity.build_id = pe_build_id(module);
  using Version = nvJitLinkResult (*)(unsigned*, unsigned*);
  const auto version = reinterpret_cast<Version>(function_of(module, "nvJitLinkVersion"));
  unsigned major = 0, minor = 0;
  if (version != nullptr && version(&major, &minor) == NVJITLINK_SUCCESS) {
    real.identity.major = static_cast<int>(major);
    real.identity.minor = static_cast<int>(minor);
  } else {
    real.not_cacheable = "this nvJitLink has no nvJitLinkVersion: its version is unknown";
  }
  for (const char* prefix : {"nvJitLink", "__nvJitLink"}) {
    for (const std::string& name : exported_names(module, prefix)) {
      if (!interpose::is_known_nvjitlink_function(name, real.identity.major)) real.unknown_functions.push_back(name);
    }
  }
  return true;
}

const RealLibraryDll<interpose::RealNvJitLink>* loaded() {
  static const auto* const l =
      load_real_library_table<interpose::RealNvJitLink>(L"NVRTC_CACHE_REAL_NVJITLINK", kRealNvJitLinkDllName, &fill);
  return l;
}

}  // namespace

const interpose::RealNvJitLink* real_nvjitlink_dll() {
  const auto* const l = loaded();
  return l != nullptr && l->functions.nvJitLinkCreate != nullptr ? &l->functions : nullptr;
}

HMODULE real_nvjitlink_module() {
  const auto* const l = loaded();
  return l != nullptr ? l->module : nullptr;
}

void* real_nvjitlink_function(const char* name) { return function_of(real_nvjitlink_module(), name); }

}  // namespace nvrtc_cache::shim::windows
