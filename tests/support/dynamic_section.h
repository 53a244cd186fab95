// dynamic_section: what a client binary needs at startup, read from its ELF file (DT_NEEDED), so a
// loading test can prove its client loads NVRTC the way the test says (a dlopen client must not
// have NVRTC among its startup dependencies). Contract: test-only; reads the file; 64-bit ELF.
#pragma once

#include <string>
#include <vector>

namespace nvrtc_cache::testing {

// The DT_NEEDED entries of the ELF file at `path`, in order (follows symlinks); throws
// std::runtime_error when the file is not a 64-bit ELF object with a dynamic section.
std::vector<std::string> needed_libraries(const std::string& path);
// True if one of them is an NVRTC (libnvrtc.so.*, libnvrtc-<hash>..., not libnvrtc-builtins).
bool needs_nvrtc(const std::string& path);
// The binary a Python command runs as (sys.executable, its symlinks resolved; wrapper scripts such
// as pyenv's shims followed), "" if it does not run.
std::string python_binary(const std::string& python);

}  // namespace nvrtc_cache::testing
