#include "shim/watch/observations.h"

#include <dlfcn.h>

#include <string_view>

namespace nvrtc_cache::shim::watch {
namespace {

// Objects whose file accesses during a call are the driver's own cache, not inputs.
bool is_driver_object(const void* caller) {
  Dl_info info;
  if (caller == nullptr || dladdr(caller, &info) == 0 || info.dli_fname == nullptr) return false;
  const std::string_view file = info.dli_fname;
  return file.find("libcuda.so") != std::string_view::npos || file.find("libnvidia-") != std::string_view::npos;
}

}  // namespace

std::vector<direct::Observation> observations_of(const CompileWatch& watch) {
  std::vector<direct::Observation> out;
  out.reserve(watch.event_count());
  watch.for_each_event([&out](const WatchEvent& e) {
    if (!is_driver_object(e.caller)) out.push_back(e.observation);
  });
  return out;
}

}  // namespace nvrtc_cache::shim::watch
