// Reading what identifies a shared object already loaded in this process: its GNU build-id and the
// functions it exports.
// Contract: thread-safe; reads only the object's mapped program headers and dynamic section (no file
// I/O); build_id_of_object_containing never throws, exported_function_names may throw std::bad_alloc.
#pragma once

#include <link.h>

#include <string>
#include <vector>

namespace nvrtc_cache::shim::interpose {

// The raw NT_GNU_BUILD_ID bytes of the loaded object that contains `address`, or "" if none.
std::string build_id_of_object_containing(const void* address);

// The names of the functions the loaded object `library` defines and exports (its dynamic symbol
// table: global or weak, default or protected visibility, defined) that start with `prefix`, each
// once, in table order.
std::vector<std::string> exported_function_names(const link_map* library, const char* prefix);

// Whether `name` is a function of the NVRTC table (nvrtc_api.def) or a known private entry point
// (kPrivateNvrtcFunctions).
bool is_known_nvrtc_function(const char* name);
// The nvrtc* / __nvrtc* functions the loaded NVRTC `library` exports that this build does not know
// (a newer NVRTC's).
std::vector<std::string> unknown_nvrtc_functions(const link_map* library);

}  // namespace nvrtc_cache::shim::interpose
