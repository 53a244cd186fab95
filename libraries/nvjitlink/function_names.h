// nvJitLink's function names as this build knows them, the same on every OS: a release-suffixed
// name's plain one, and whether a library of a major exporting a name is one whose every function
// the table (libraries/nvjitlink/api.def) covers — else its links are not cached (a newer nvJitLink's
// functions, another major's or release's names). Used by the real tables of Linux
// (real_nvjitlink.cc, over dlvsym) and Windows (libraries/nvjitlink/windows_real_dll.cc, over the DLL's
// export table).
// Contract: pure; thread-safe; may throw std::bad_alloc.
#pragma once

#include <string>

namespace nvrtc_cache::shim::interpose {

// "nvJitLinkCreate" for "nvJitLinkCreate", "__nvJitLinkCreate_12_0" and "__nvJitLinkCreate_13_0"
// (any known major's suffix); "" for any other name.
std::string plain_nvjitlink_name(const char* name);

// Whether a library of `major` exporting `name` is one this build knows: nvJitLinkVersion, the
// private entry point __nvJitLinkAPI, and each row of the table its major has, under its plain name
// and its major's release suffixes.
bool is_known_nvjitlink_function(const std::string& name, int major);

}  // namespace nvrtc_cache::shim::interpose
