// Reading the identity (GNU build-id) of a shared object already loaded in this process.
// Contract: thread-safe; reads only the object's mapped program headers (no file I/O); never throws.
#pragma once

#include <string>

namespace nvrtc_cache::shim::interpose {

// The raw NT_GNU_BUILD_ID bytes of the loaded object that contains `address`, or "" if none.
std::string build_id_of_object_containing(const void* address);

}  // namespace nvrtc_cache::shim::interpose
