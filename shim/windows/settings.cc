#include "shim/windows/settings.h"

#include <cctype>
#include <cstdlib>

#include "store/windows/wide.h"

namespace nvrtc_cache::shim::windows {

bool cache_disabled_setting() {
  const auto disable = store::windows::environment_variable(L"NVRTC_CACHE_DISABLE");
  return disable && (*disable == "1" || *disable == "true" || *disable == "yes");
}

std::string cache_directory_setting() {
  if (auto dir = store::windows::environment_variable(L"NVRTC_CACHE_DIR"); dir && !dir->empty()) return *dir;
  if (auto local = store::windows::environment_variable(L"LOCALAPPDATA"); local && !local->empty()) {
    return *local + "\\nvrtc-cache";
  }
  return {};
}

std::uint64_t map_size_setting() {
  constexpr std::uint64_t kDefault = 1ull << 30;
  const auto text = store::windows::environment_variable(L"NVRTC_CACHE_MAX_SIZE");
  if (!text || text->empty()) return kDefault;
  char* end = nullptr;
  std::uint64_t n = std::strtoull(text->c_str(), &end, 10);
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case 'K': n <<= 10; break;
    case 'M': n <<= 20; break;
    case 'G': n <<= 30; break;
    default: break;
  }
  return n >= (1ull << 20) ? n : kDefault;
}

}  // namespace nvrtc_cache::shim::windows
