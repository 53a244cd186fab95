#include "tools/install_paths.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace nvrtc_cache::tools {

std::string self_path() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  return std::string(self, static_cast<std::size_t>(n));
}

std::string prefix() {
  std::string dir = self_path();
  if (dir.empty()) return {};
  dir.resize(dir.rfind('/'));
  dir.resize(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
  return dir;
}

std::string shim_path(bool proxy) {
  if (const char* explicit_path = std::getenv("NVRTC_CACHE_SHIM"); explicit_path && *explicit_path) {
    return explicit_path;
  }
  return prefix() + (proxy ? "/lib/nvrtc-cache/proxy/libnvrtc.so.13" : "/lib/libnvrtc-cache.so");
}

}  // namespace nvrtc_cache::tools
