// What a watched call (a compile or a link) observed, as the dependency recorder takes it: the
// watch's events less the accesses of the driver's own cache (libcuda, libnvidia-*), which are not
// inputs of the call.
// Contract: reads a stopped watch; dladdr per event; thread-safe; may throw std::bad_alloc.
#pragma once

#include <vector>

#include "direct/dependencies.h"
#include "shim/watch/file_watch.h"

namespace nvrtc_cache::shim::watch {

std::vector<direct::Observation> observations_of(const CompileWatch& watch);

}  // namespace nvrtc_cache::shim::watch
