// A library loaded by its path and the addresses of its functions: dlopen/dlsym (POSIX), and
// LoadLibraryExW/GetProcAddress (Windows, its own dependencies looked for beside it), for the CLI's
// sample compile (tools/commands/sample_compile_command.cc), which loads NVRTC the way the JIT stacks do.
// Contract: thread-safe; never throws except std::bad_alloc; a loaded library stays loaded.
#pragma once

#include <string>

namespace nvrtc_cache::platform {

// The library at `path`, or nullptr with *error saying why.
void* load_library(const std::string& path, std::string* error);
// The function `name` of `library`, or nullptr.
void* library_function(void* library, const char* name);

}  // namespace nvrtc_cache::platform
