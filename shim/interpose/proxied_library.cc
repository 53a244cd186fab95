#include "shim/interpose/proxied_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "core/log.h"
#include "platform/errno_guard.h"
#include "libraries/nvrtc/real_nvrtc.h"

namespace nvrtc_cache::shim::interpose {
namespace {

// The directory this proxy (and its stand-ins) lives in: never a real library's.
std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string self = info.dli_fname;
  const auto slash = self.find_last_of('/');
  return slash == std::string::npos ? "" : self.substr(0, slash);
}

// realpath, or "" when it cannot be resolved.
std::string resolved(const std::string& path) {
  char* full = path.empty() ? nullptr : ::realpath(path.c_str(), nullptr);
  if (full == nullptr) return "";
  std::string out = full;
  std::free(full);
  return out;
}

// Whether `handle` is a library of this proxy's own directory (a stand-in named as the real library,
// by an override or an activation that found it first): forwarding to it would call itself forever.
bool is_own_library(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) return false;
  const std::string opened = resolved(map->l_name);
  const std::string own = resolved(own_directory());
  return !opened.empty() && !own.empty() && opened.rfind(own + "/", 0) == 0 &&
         opened.find('/', own.size() + 1) == std::string::npos;
}

struct Searched {
  std::once_flag once;
  std::string path;
  std::string found_via;
};

Searched& searched(const ProxiedLibrary& library) {
  static Searched each[kProxiedLibraryCount];
  return each[library.search_slot];
}

// The major a library's file name gives (libnvrtc.so.12.9.86 and libnvrtc.so.12: "12"), or "".
std::string major_in_name(const std::string& path) {
  const std::string name = path.substr(path.find_last_of('/') + 1);
  const auto so = name.find(".so.");
  if (so == std::string::npos) return "";
  const std::string rest = name.substr(so + 4);
  const std::string major = rest.substr(0, rest.find('.'));
  return !major.empty() && major.find_first_not_of("0123456789") == std::string::npos ? major : "";
}

}  // namespace

bool override_fits(const ProxiedLibrary& library, const std::string& path) {
  const std::string major = major_in_name(path);
  return major.empty() || major == major_in_name(library.soname) ||
         (library.fallback_soname != nullptr && major == major_in_name(library.fallback_soname));
}

std::string proxied_library_path(const ProxiedLibrary& library) {
  const char* configured = std::getenv(override_variable(library.library));
  if (configured && *configured && override_fits(library, configured)) return configured;
  Searched& result = searched(library);
  std::call_once(result.once, [&] {
    try {
      SearchRoots roots = roots_of_this_process();
      roots.skip_dirs.push_back(own_directory());
      LibrarySpec spec = spec_of(library.library);
      spec.sonames = {library.soname};
      std::optional<FoundLibrary> found = find_library(spec, roots);
      if (!found && library.fallback_soname != nullptr) {
        spec.sonames = {library.fallback_soname};
        found = find_library(spec, roots);
      }
      if (found) {
        result.path = found->path;
        result.found_via = found->found_via;
      }
    } catch (...) {
    }
  });
  // Said here, not in the search: a first search in a stand-in's constructor runs before the log
  // level is read.
  if (!result.path.empty() && core::log_enabled(core::LogLevel::kInfo)) {
    core::log_once(core::LogLevel::kInfo, std::string("proxy-real-") + library.soname,
                   std::string("proxy: the real ") + library_name(library.library) + " is " + result.path +
                       " (found in " + result.found_via + ")");
  }
  return result.path;
}

void* open_proxied_library(const ProxiedLibrary& library) {
  const platform::ErrnoGuard errno_guard;
  const char* what = library_name(library.library);
  std::string path;
  try {
    path = proxied_library_path(library);
  } catch (...) {
    return nullptr;
  }
  // dlopen of a library already open only takes a reference: each caller may open it.
  void* handle = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr && is_own_library(handle)) {
    dlclose(handle);
    try {
      core::log_once(core::LogLevel::kError, std::string("proxy-real-is-self-") + library.soname,
                     std::string("proxy: ") + path + ", named as the real " + what + " (" +
                         override_variable(library.library) +
                         " or the search), is this proxy's own; its calls fail as " + what + " fails");
    } catch (...) {
    }
    return nullptr;
  }
  if (handle == nullptr) {
    try {
      const char* error = path.empty() ? nullptr : dlerror();
      const char* variable = override_variable(library.library);
      const char* configured = std::getenv(variable);
      core::log_once(
          core::LogLevel::kError, std::string("proxy-no-real-") + library.soname,
          path.empty() ? std::string("proxy: no real ") + library.soname +
                             " found (the interpreter's wheels, "
                             "CONDA_PREFIX, the loader's directories, CUDA_PATH/CUDA_HOME, /usr/local/cuda); set " +
                             variable + "; its calls fail as " + what + " fails"
                       : std::string("proxy: cannot load the real ") + what + " (" + path + ", " +
                             (configured && *configured && override_fits(library, configured) ? variable
                                                                                              : "found by the search") +
                             "): " + (error ? error : "unknown error") + "; its calls fail as " + what + " fails");
    } catch (...) {
    }
  }
  return handle;
}

void* proxied_function(const ProxiedLibrary& library, const char* name) {
  void* handle = open_proxied_library(library);
  if (handle == nullptr || name == nullptr) return nullptr;
  void* found = library.node ? dlvsym(handle, name, library.node) : nullptr;
  return found ? found : real_dlsym(handle, name);
}

}  // namespace nvrtc_cache::shim::interpose
