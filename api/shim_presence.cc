#include "api/shim_presence.h"

#include <link.h>

#include <string_view>

namespace nvrtc_cache::api {

bool shim_loaded_in_process() {
  bool found = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (name.ends_with("/libnvrtc-cache.so") || name == "libnvrtc-cache.so" ||
            name.ends_with("/nvrtc-cache/proxy/libnvrtc.so.13")) {
          *static_cast<bool*>(data) = true;
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

}  // namespace nvrtc_cache::api
