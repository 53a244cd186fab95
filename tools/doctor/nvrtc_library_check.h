// Which NVRTC library (or nvJitLink, libNVVM: JitApi) `nvrtc-cache replay` may load for a recording's
// programs, links and NVVM compiles. The path comes from
// the recording (or --nvrtc) and loading a shared object runs its code, so the file is judged on disk
// before anything is loaded:
// - the path is absolute and resolves (realpath) to a regular file, opened without following a
//   final symlink and without blocking;
// - the file and every directory above it are owned by root or the caller, and no one else can write
//   them: not writable by others, nor by a group other than the caller's own (a group that lists no
//   member but the caller, without an access control list); a directory writable by others is
//   accepted only when sticky, since the entry below it is owned by root or the caller;
// - it is an ELF shared object for this machine whose SONAME is an NVRTC's (libnvrtc.*) and whose GNU
//   build-id (read from the file, util/elf_identity.h) is the recording's (libnvJitLink.*,
//   libnvvm.* for the other two).
// A build-id names a build; it does not authenticate one (anyone can write any build-id into a
// file): the ownership checks are what keep another user's code from being run. Only a library that
// passes is dlopen()ed, and the loaded object's nvrtcVersion and build-id are checked again.
// Contract: single-threaded (dlerror); reads the file system and the user and group databases
// (NSS); load_checked_nvrtc dlopen()s; no fork; never throws except std::bad_alloc; every refusal is
// one sentence naming the path and saying why.
#pragma once

#include <dlfcn.h>

#include <map>
#include <string>

#include "keying/program_inputs.h"

namespace nvrtc_cache::tools {

// The JIT library to check: its name in messages, its SONAME's prefix and its version function
// (two int* or unsigned* arguments).
enum class JitApi { nvrtc, nvjitlink, nvvm };

struct NvrtcFileCheck {
  std::string resolved;  // the path to load, every symlink resolved; "" when refused
  std::string refused;   // why the library must not be loaded; "" when it may be
};
// Judges the file at `path` for programs compiled by `recorded`, without loading it.
NvrtcFileCheck check_nvrtc_file(const std::string& path, const keying::LibraryIdentity& recorded,
                                JitApi api = JitApi::nvrtc);

struct LoadedNvrtc {
  void* handle = nullptr;  // dlopen()'s; nullptr when refused
  std::string resolved;
  std::string refused;
};
// check_nvrtc_file(), then dlopen() of the resolved path and the loaded object's checks (its
// nvrtcVersion and the build-id of the object loaded must be the recording's). A library that fails
// them after loading stays loaded (dlclose() would not undo its constructors) but is refused.
LoadedNvrtc load_checked_nvrtc(const std::string& path, const keying::LibraryIdentity& recorded,
                               JitApi api = JitApi::nvrtc);

// The library's name in messages ("NVRTC", "nvJitLink", "libNVVM").
const char* jit_api_name(JitApi api);

// `fn` = the function `name` of the loaded library (through dlsym, so the shim's hook answers it).
template <typename Fn>
void look_up(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
}

// The replay workers' way to a library's functions: `Api` is a struct of function pointers with a
// `std::string problem`, loaded (load_checked_nvrtc) once per path and identity for the life of the
// process; `resolve` looks its functions up in the handle (look_up) and returns false when one the
// caller needs is missing. The result's `problem` is empty when every function is there.
template <typename Api>
const Api& load_checked_api(const std::string& path, const keying::LibraryIdentity& recorded, JitApi kind,
                            bool (*resolve)(void* handle, Api& api)) {
  static std::map<std::string, Api> loaded;
  auto [it, inserted] = loaded.try_emplace(path + '\0' + std::to_string(recorded.major) + "." +
                                           std::to_string(recorded.minor) + '\0' + recorded.build_id);
  Api& api = it->second;
  if (!inserted) return api;
  const LoadedNvrtc library = load_checked_nvrtc(path, recorded, kind);
  if (library.handle == nullptr) {
    api.problem = library.refused;
  } else if (!resolve(library.handle, api)) {
    api.problem = path + " lacks " + jit_api_name(kind) + "'s functions";
  }
  return api;
}

}  // namespace nvrtc_cache::tools
