// Where this system keeps a user's cache and configuration by default: the XDG base directories on
// POSIX (with /tmp and /etc as the last resort), the user's profile on Windows (%LOCALAPPDATA%,
// %APPDATA%, %ProgramData%). The environment is read through `lookup` only, so tests pass their own.
// Contract: pure functions of `lookup` (and, on POSIX, of this process's uid); thread-safe;
// fork-safe; no filesystem access; never throw except std::bad_alloc or what `lookup` throws.
// Implementations, chosen by the build: user_directories_posix.cc and user_directories_windows.cc.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace nvrtc_cache::platform {

// An environment variable's value, or nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// The cache directory: $XDG_CACHE_HOME/nvrtc-cache (absolute only), ~/.cache/nvrtc-cache, else
// /tmp/nvrtc-cache-<uid>. Windows: %LOCALAPPDATA%\nvrtc-cache, else
// %USERPROFILE%\AppData\Local\nvrtc-cache, else "".
std::string default_cache_directory(const EnvLookup& lookup);
// The node-local directory used when the cache directory is on a network filesystem:
// $XDG_RUNTIME_DIR/nvrtc-cache (absolute only), else /tmp/nvrtc-cache-<uid>. Windows: "" (no network
// filesystem is detected there).
std::string default_fallback_directory(const EnvLookup& lookup);

// The system configuration file: /etc/nvrtc-cache.conf. Windows:
// %ProgramData%\nvrtc-cache\nvrtc-cache.conf, or "" without ProgramData.
std::string default_system_config_file(const EnvLookup& lookup);
// The user's configuration file: $XDG_CONFIG_HOME/nvrtc-cache/nvrtc-cache.conf (absolute only), else
// ~/.config/nvrtc-cache/nvrtc-cache.conf, else "". Windows: %APPDATA%\nvrtc-cache\nvrtc-cache.conf,
// else "".
std::string default_user_config_file(const EnvLookup& lookup);

}  // namespace nvrtc_cache::platform
