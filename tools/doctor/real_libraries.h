// The real NVRTC, nvJitLink and libNVVM the CLI uses (doctor's checks and sample compile, replay's
// fallback when a recorded library is gone): NVRTC_CACHE_REAL_* when set, else the run-time search
// (shim/interpose/library_search.h) with, after $VIRTUAL_ENV's, the site-packages of the environment
// this CLI is installed in (<venv>/bin/nvrtc-cache, or <site-packages>/nvrtc_cache/bin/nvrtc-cache).
// Contract: single-threaded use; reads the filesystem and the environment; loads nothing; never
// throws but std::bad_alloc.
#pragma once

#include <optional>
#include <vector>

#include "shim/interpose/library_search.h"

namespace nvrtc_cache::tools {

// The roots this CLI searches.
shim::interpose::SearchRoots cli_search_roots();
// The library to use: the override variable's path (found_via names the variable), else the first find.
std::optional<shim::interpose::FoundLibrary> real_library(shim::interpose::RealLibrary library);
// Every candidate, in order (the override first when set).
std::vector<shim::interpose::FoundLibrary> real_library_candidates(shim::interpose::RealLibrary library);

}  // namespace nvrtc_cache::tools
