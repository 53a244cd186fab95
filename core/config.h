// Config: the shim's settings, read once per process from the environment and the configuration
// files (precedence: environment > user file > system file > default). Every setting is one row of
// core/settings.h.
// Contract: config_from_environment() is pure apart from reading the variables through the given
// lookup; load_config() also reads the two files (a missing file costs one failed open(2)); a bad
// value never fails: it yields one message naming the setting (and the file and line) and the value
// used instead. Thread-safe; no state.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/paths.h"
#include "platform/user_directories.h"
#include "store/cache_directory.h"

namespace nvrtc_cache::core {

enum class LogLevel { kOff = 0, kError, kWarn, kInfo, kDebug };

struct Config {
  bool disabled = false;
  std::string cache_dir;
  std::uint64_t max_size_bytes = 5ull << 30;
  int compression_level = 1;  // NVRTC_CACHE_COMPRESSION: zstd level of new entries; 0 stores them uncompressed
  LogLevel log_level = LogLevel::kWarn;
  std::string log_file;      // empty: stderr
  bool shared = false;       // NVRTC_CACHE_SHARED=1: accept a cache directory shared between users
  std::string fallback_dir;  // node-local directory used when cache_dir is on a network filesystem
  // NVRTC_CACHE_WAIT_TIMEOUT: how long a compile waits for another compile of the same program
  // (shim/flight/single_flight.h); 0 turns waiting off; unset: the adaptive default.
  std::optional<std::chrono::milliseconds> wait_timeout;
  // NVRTC_CACHE_REMOTE: shared tiers after the local store, URLs separated by white space
  // (store/remote/tier_set.h); NVRTC_CACHE_REMOTE_SECRET_FILE: the key that signs their values.
  std::string remote;
  std::string remote_secret_file;
  // NVRTC_CACHE_RECORD: append a core::CompileRecord of every compile to this file (empty: off).
  std::string record_file;
  std::vector<std::string> problems;  // one message per bad value, already naming the variable
  // Where each setting's value came from, indexed like settings(): "default", "environment
  // NVRTC_CACHE_DIR", "/etc/nvrtc-cache.conf:3".
  std::vector<std::string> origins;

  std::string store_dir() const { return cache_dir + platform::path_separator() + "store"; }
};

using EnvLookup = platform::EnvLookup;

// Defaults and the environment only (no files).
Config config_from_environment(const EnvLookup& lookup);
// Defaults < system file < user file < environment, the files named by config_paths(lookup).
Config config_from_process_environment();

// Logs what a process's settings got wrong, as every intercepting library says it at start: each bad
// value (warn), each NVRTC_CACHE_* variable of the environment that nothing reads (warn when it is
// likely a misspelling of one, naming it; info otherwise: it may be another tool's).
void log_settings_problems(const Config& config);

// The configuration files. The user file is $NVRTC_CACHE_CONFIG if set, else
// $XDG_CONFIG_HOME/nvrtc-cache/nvrtc-cache.conf, else ~/.config/nvrtc-cache/nvrtc-cache.conf; the
// system file is $NVRTC_CACHE_SYSTEM_CONFIG if set (tests, packagers), else /etc/nvrtc-cache.conf.
// On Windows: %APPDATA%\nvrtc-cache\nvrtc-cache.conf and %ProgramData%\nvrtc-cache\nvrtc-cache.conf
// (the defaults: platform/user_directories.h).
struct ConfigPaths {
  std::string system;
  std::string user;  // empty when neither NVRTC_CACHE_CONFIG, XDG_CONFIG_HOME nor HOME is set
};
ConfigPaths config_paths(const EnvLookup& lookup);

// A configuration file's bytes, or nullopt when it cannot be used; `problem` says why for a file that
// exists (not a regular file, larger than kMaxConfigFileBytes, unreadable) and is empty for a missing
// one. Read non-blocking: a FIFO is refused at once, never waited on.
inline constexpr std::size_t kMaxConfigFileBytes = 1 << 20;
struct ConfigFileText {
  std::optional<std::string> text;
  std::string problem;
  ConfigFileText() = default;
  ConfigFileText(std::optional<std::string> bytes) : text(std::move(bytes)) {}  // NOLINT: readers return bytes
};
using FileReader = std::function<ConfigFileText(const std::string& path)>;
ConfigFileText read_config_file(const std::string& path);

Config load_config(const EnvLookup& lookup, const FileReader& read = read_config_file);

// Applies `text`, lines as in a configuration file, over `config` (each value's origin is
// "<origin>:<line>"; a bad line or value adds one message to config.problems, as a file's would).
void apply_settings_text(Config& config, std::string_view text, const std::string& origin, const EnvLookup& lookup);

// One `key = value` line of a configuration file; blank lines and lines starting with '#' are
// neither. Whitespace around key and value is dropped.
struct ConfigLine {
  std::string key, value;
};
std::optional<ConfigLine> parse_config_line(std::string_view line);

// Where and how the store is opened (store/cache_directory.h), from the configuration.
store::CachePolicy cache_policy(const Config& config);

// A path value as the configuration gives it, with a leading `~` (followed by a separator or
// nothing) replaced by $HOME and each `$VAR` / `${VAR}` by that variable, as ccache does; nullopt,
// with *problem saying why, when a variable it names is not set.
std::optional<std::string> expand_path(std::string_view value, const EnvLookup& lookup,
                                       std::optional<std::string>* problem);

// "30", "0.5" -> that many seconds (0 to 86400); nullopt when malformed or out of range.
std::optional<std::chrono::milliseconds> parse_seconds(const std::string& text);

// "10G", "512M", "1.5GiB", "10Gi", "4096B" -> bytes (binary units); a number without a unit is GiB
// ("10" is 10G, as ccache's max_size); nullopt when malformed or zero.
std::optional<std::uint64_t> parse_size(const std::string& text);

}  // namespace nvrtc_cache::core
