// Default directories (platform/user_directories.h) on POSIX: the XDG base directories.
#include "platform/user_directories.h"

#include <unistd.h>

namespace nvrtc_cache::platform {
namespace {

bool set_absolute(const std::optional<std::string>& value) { return value && !value->empty() && (*value)[0] == '/'; }
bool set(const std::optional<std::string>& value) { return value && !value->empty(); }

std::string per_user_tmp() { return "/tmp/nvrtc-cache-" + std::to_string(getuid()); }

}  // namespace

std::string default_cache_directory(const EnvLookup& lookup) {
  if (auto xdg = lookup("XDG_CACHE_HOME"); set_absolute(xdg)) return *xdg + "/nvrtc-cache";
  if (auto home = lookup("HOME"); set(home)) return *home + "/.cache/nvrtc-cache";
  return per_user_tmp();
}

std::string default_fallback_directory(const EnvLookup& lookup) {
  if (auto run = lookup("XDG_RUNTIME_DIR"); set_absolute(run)) return *run + "/nvrtc-cache";
  return per_user_tmp();
}

std::string default_system_config_file(const EnvLookup&) { return "/etc/nvrtc-cache.conf"; }

std::string default_user_config_file(const EnvLookup& lookup) {
  if (auto xdg = lookup("XDG_CONFIG_HOME"); set_absolute(xdg)) return *xdg + "/nvrtc-cache/nvrtc-cache.conf";
  if (auto home = lookup("HOME"); set(home)) return *home + "/.config/nvrtc-cache/nvrtc-cache.conf";
  return {};
}

}  // namespace nvrtc_cache::platform
