// Default directories (platform/user_directories.h) on Windows: under the user's profile and
// %ProgramData%.
#include "platform/user_directories.h"

namespace nvrtc_cache::platform {
namespace {

bool set(const std::optional<std::string>& value) { return value && !value->empty(); }

}  // namespace

std::string default_cache_directory(const EnvLookup& lookup) {
  if (auto local = lookup("LOCALAPPDATA"); set(local)) return *local + "\\nvrtc-cache";
  if (auto profile = lookup("USERPROFILE"); set(profile)) return *profile + "\\AppData\\Local\\nvrtc-cache";
  return {};
}

std::string default_fallback_directory(const EnvLookup&) { return {}; }

std::string default_system_config_file(const EnvLookup& lookup) {
  if (auto data = lookup("ProgramData"); set(data)) return *data + "\\nvrtc-cache\\nvrtc-cache.conf";
  return {};
}

std::string default_user_config_file(const EnvLookup& lookup) {
  if (auto roaming = lookup("APPDATA"); set(roaming)) return *roaming + "\\nvrtc-cache\\nvrtc-cache.conf";
  return {};
}

}  // namespace nvrtc_cache::platform
