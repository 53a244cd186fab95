#include "tools/open_cache.h"

#include <cstdio>

namespace nvrtc_cache::tools {

store::OpenedCache open_cache_reporting(const core::Config& config) {
  store::OpenedCache opened = store::open_cache(core::cache_policy(config));
  for (const auto& message : opened.messages) std::fprintf(stderr, "nvrtc-cache: %s\n", message.c_str());
  if (!opened.store) {
    std::fprintf(stderr, "nvrtc-cache: cannot open the cache at %s: %s\n", opened.directory.c_str(),
                 opened.status.message().c_str());
  }
  return opened;
}

}  // namespace nvrtc_cache::tools
