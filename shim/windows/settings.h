// The Windows port's settings, from the environment (the Linux configuration files are not read on
// Windows), shared by the proxy DLL and nvrtc-cache.exe:
//   NVRTC_CACHE_DISABLE=1  every call passes straight to NVRTC
//   NVRTC_CACHE_DIR        the cache directory (default %LOCALAPPDATA%\\nvrtc-cache)
//   NVRTC_CACHE_MAX_SIZE   the store's map size in bytes (K/M/G suffixes; default 1G, at least 1M)
// Contract: pure reads of the environment; thread-safe; keep the thread's last-error value.
#pragma once

#include <cstdint>
#include <string>

namespace nvrtc_cache::shim::windows {

bool cache_disabled_setting();
// "" when neither NVRTC_CACHE_DIR nor LOCALAPPDATA is set.
std::string cache_directory_setting();
std::uint64_t map_size_setting();

}  // namespace nvrtc_cache::shim::windows
