#include "core/settings.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/entry_compression.h"
#include "platform/paths.h"
#include "store/remote/shown_url.h"
#include "util/spelling.h"

namespace nvrtc_cache::core {
namespace {

using Problem = std::optional<std::string>;

Problem parse_bool(std::string_view v, bool& out) {
  if (v == "1" || v == "true" || v == "yes" || v == "on")
    out = true;
  else if (v == "0" || v == "false" || v == "no" || v == "off")
    out = false;
  else
    return "is not 0/1 (true/false, yes/no)";
  return std::nullopt;
}

using platform::is_absolute_path;
using platform::is_drive_root;
using platform::is_path_separator;

std::string show_bool(bool v) { return v ? "1" : "0"; }

std::string show_size(std::uint64_t bytes) {
  static constexpr std::array<std::pair<std::uint64_t, const char*>, 4> kUnits = {
      {{1ull << 40, "T"}, {1ull << 30, "G"}, {1ull << 20, "M"}, {1ull << 10, "K"}}};
  for (const auto& [scale, unit] : kUnits) {
    if (bytes % scale == 0) return std::to_string(bytes / scale) + unit;
  }
  return std::to_string(bytes);
}

std::optional<LogLevel> parse_level(std::string_view given) {
  std::string v(given);  // case-insensitive: DEBUG, Debug and debug are one level
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v == "off") return LogLevel::kOff;
  if (v == "error") return LogLevel::kError;
  if (v == "warn") return LogLevel::kWarn;
  if (v == "info") return LogLevel::kInfo;
  if (v == "debug") return LogLevel::kDebug;
  return std::nullopt;
}

std::string show_level(LogLevel level) {
  static constexpr std::array<const char*, 5> kNames = {"off", "error", "warn", "info", "debug"};
  return kNames[static_cast<std::size_t>(level)];
}

std::string show_seconds(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(ms.count()) / 1000.0);
  return text;
}

constexpr SettingSpec kSettings[] = {
    {"disable", "NVRTC_CACHE_DISABLE", SettingType::kBool, "0", "`1` passes every call straight to NVRTC.",
     [](Config& c, std::string_view v) { return parse_bool(v, c.disabled); },
     [](const Config& c) { return show_bool(c.disabled); }},
    {"cache_dir", "NVRTC_CACHE_DIR", SettingType::kPath, "`$XDG_CACHE_HOME/nvrtc-cache`, else `~/.cache/nvrtc-cache`",
     "The cache directory (absolute path); the LMDB store lives in `store/` under it.",
     [](Config& c, std::string_view v) -> Problem {
       if (!is_absolute_path(v)) return "is not an absolute path";
       while (v.size() > 1 && is_path_separator(v.back()) && !is_drive_root(v)) v.remove_suffix(1);
       c.cache_dir = v;
       return std::nullopt;
     },
     [](const Config& c) { return c.cache_dir; }},
    {"max_size", "NVRTC_CACHE_MAX_SIZE", SettingType::kSize, "5G",
     "The store's cap (its LMDB map size; on Windows the map starts small and grows to it), e.g. `10G`, "
     "`512M`, `1.5G`; a number without a unit is GiB (`10` "
     "is `10G`, as in ccache); at least `1M`. Least-recently-used entries are evicted from 75% of the map down "
     "to 60%.",
     [](Config& c, std::string_view v) -> Problem {
       const auto bytes = parse_size(std::string(v));
       if (!bytes || *bytes < (1u << 20)) return "is not a size of at least 1M (e.g. 10G, 512M)";
       c.max_size_bytes = *bytes;
       return std::nullopt;
     },
     [](const Config& c) { return show_size(c.max_size_bytes); }},
    {"compression", "NVRTC_CACHE_COMPRESSION", SettingType::kNumber, "1",
     "The zstd level new results are stored at (`1` to `19`; `0` stores them uncompressed). Entries of either "
     "kind are read whatever the setting. Level 1 stores a CUB kernel's result in a tenth of the space for about "
     "0.2 ms more per hit (docs/performance.md); higher levels gain little and take longer to store.",
     [](Config& c, std::string_view v) -> Problem {
       if (v.empty() || v.size() > 2 || v.find_first_not_of("0123456789") != std::string_view::npos ||
           std::stoi(std::string(v)) > kMaxCompressionLevel) {
         return "is not a zstd level from 0 (off) to 19";
       }
       c.compression_level = std::stoi(std::string(v));
       return std::nullopt;
     },
     [](const Config& c) { return std::to_string(c.compression_level); }},
    {"log", "NVRTC_CACHE_LOG", SettingType::kLogLevel, "warn",
     "`off`, `error`, `warn`, `info`, `debug` (debug says for every compile: hit, miss, or why uncacheable).",
     [](Config& c, std::string_view v) -> Problem {
       const auto level = parse_level(v);
       if (!level) return "is not one of off|error|warn|info|debug";
       c.log_level = *level;
       return std::nullopt;
     },
     [](const Config& c) { return show_level(c.log_level); }},
    {"log_file", "NVRTC_CACHE_LOG_FILE", SettingType::kPath, "stderr",
     "Append diagnostics to this file instead of stderr (a regular file of your own, or created 0600; never a "
     "link or another user's file).",
     [](Config& c, std::string_view v) -> Problem {
       c.log_file = v;
       return std::nullopt;
     },
     [](const Config& c) { return c.log_file; }},
    {"wait_timeout", "NVRTC_CACHE_WAIT_TIMEOUT", SettingType::kSeconds,
     "twice the longest compile this process has done + 30 s, within 2-10 min",
     "Seconds a compile waits for another compile of the same program on this node (0 to 86400; `0` turns "
     "waiting off).",
     [](Config& c, std::string_view v) -> Problem {
       const auto timeout = parse_seconds(std::string(v));
       if (!timeout) return "is not a number of seconds from 0 to 86400";
       c.wait_timeout = *timeout;
       return std::nullopt;
     },
     [](const Config& c) { return c.wait_timeout ? show_seconds(*c.wait_timeout) : std::string(); }},
    {"shared", "NVRTC_CACHE_SHARED", SettingType::kBool, "0",
     "`1` accepts a cache directory owned by another user or writable by group/others (a cache shared on "
     "purpose: everyone who can write it is trusted), and creates what is missing for the directory's group "
     "(directories 2770, files 0660, whatever the umask): make the team's directory with `install -d -m 2770 "
     "-g TEAM DIR`. Otherwise such a directory is refused.",
     [](Config& c, std::string_view v) { return parse_bool(v, c.shared); },
     [](const Config& c) { return show_bool(c.shared); }},
    {"remote", "NVRTC_CACHE_REMOTE", SettingType::kText, "none",
     "Shared tiers after the local store, space-separated URLs (`redis://host:6379/0`, "
     "`rediss://host:6380?tls-ca-file=/etc/ca.pem` over TLS, `https://cache.lan/nvrtc?layout=bazel` an HTTP cache, "
     "`file:///shared/dir`); passwords and tokens are never shown.",
     [](Config& c, std::string_view v) -> Problem {
       if (v.find("://") == std::string_view::npos) return "is not a list of URLs (e.g. redis://host:6379/0)";
       c.remote = v;
       return std::nullopt;
     },
     [](const Config& c) { return store::remote::shown_urls(c.remote); }},
    {"remote_secret_file", "NVRTC_CACHE_REMOTE_SECRET_FILE", SettingType::kPath, "none",
     "A file holding the secret that signs entries of shared tiers (absolute path; at least 16 random bytes: "
     "`head -c 32 /dev/urandom > FILE`); with it, an unsigned or wrongly signed entry from a shared tier is a miss.",
     [](Config& c, std::string_view v) -> Problem {
       if (!is_absolute_path(v)) return "is not an absolute path";
       c.remote_secret_file = v;
       return std::nullopt;
     },
     [](const Config& c) { return c.remote_secret_file; }},
    {"record", "NVRTC_CACHE_RECORD", SettingType::kPath, "none",
     "Append a record of every compile (hit or miss: the NVRTC library, the program's inputs, its dependencies "
     "with their fingerprints), and of every nvJitLink link and libNVVM compile (the library, the options and every "
     "input in order), to this file (absolute path), for `nvrtc-cache replay` on another machine or for other GPUs; "
     "`nvrtc-cache run --record FILE` sets it. A regular file of your own (or created 0600): never a link or another "
     "user's file.",
     [](Config& c, std::string_view v) -> Problem {
       if (!is_absolute_path(v)) return "is not an absolute path";
       c.record_file = v;
       return std::nullopt;
     },
     [](const Config& c) { return c.record_file; }},
};

constexpr OtherVariable kOtherVariables[] = {
    {"NVRTC_CACHE_CONFIG",
     "The user configuration file, instead of ~/.config/nvrtc-cache/nvrtc-cache.conf "
     "(/dev/null: none)."},
    {"NVRTC_CACHE_SYSTEM_CONFIG",
     "The system configuration file, instead of /etc/nvrtc-cache.conf (for "
     "packagers and tests)."},
    {"NVRTC_CACHE_SHIM", "The shim library nvrtc-cache run preloads, instead of the installed one."},
    {"NVRTC_CACHE_ACTIVATE",
     "0: a Python environment's interpreters do not activate the cache at start (python -m "
     "nvrtc_cache.environment enable)."},
    {"NVRTC_CACHE_REAL_NVRTC",
     "The real NVRTC library the proxy (nvrtc-cache run --proxy) loads and doctor checks, instead of "
     "the one found where cuda.pathfinder looks (the interpreter's wheels, CONDA_PREFIX, the loader's "
     "directories, CUDA_PATH/CUDA_HOME, /usr/local/cuda)."},
    {"NVRTC_CACHE_REAL_NVJITLINK",
     "The real nvJitLink library the proxy's libnvJitLink.so.13 forwards to and doctor names, instead of "
     "the one found where cuda.pathfinder looks."},
    {"NVRTC_CACHE_REAL_NVVM",
     "The real libNVVM library the proxy's libnvvm.so.4 forwards to and doctor names, instead of the one "
     "found where cuda.pathfinder looks."},
};

constexpr std::string_view kVariablePrefix = "NVRTC_CACHE_";

}  // namespace

std::span<const OtherVariable> other_variables() { return kOtherVariables; }

bool is_known_variable(std::string_view name) {
  for (const SettingSpec& s : kSettings) {
    if (s.env == name) return true;
  }
  for (const OtherVariable& v : kOtherVariables) {
    if (v.name == name) return true;
  }
  return false;
}

std::string suggest_variable(std::string_view name) {
  if (!name.starts_with(kVariablePrefix) || is_known_variable(name)) return "";
  // Compared without the prefix, so the limit on edits scales with the part that differs.
  std::vector<std::string> suffixes;
  for (const SettingSpec& s : kSettings) suffixes.emplace_back(s.env.substr(kVariablePrefix.size()));
  for (const OtherVariable& v : kOtherVariables) suffixes.emplace_back(v.name.substr(kVariablePrefix.size()));
  const std::string best = util::closest(name.substr(kVariablePrefix.size()), suffixes);
  return best.empty() ? "" : std::string(kVariablePrefix) + best;
}

std::vector<UnknownVariable> unknown_variables(const std::vector<std::string>& names) {
  std::vector<UnknownVariable> out;
  for (const std::string& name : names) {
    if (!name.starts_with(kVariablePrefix) || is_known_variable(name)) continue;
    out.push_back({name, suggest_variable(name)});
  }
  return out;
}

std::string unknown_variable_message(const UnknownVariable& variable) {
  return variable.name + " is not a variable nvrtc-cache reads" +
         (variable.suggestion.empty() ? std::string(" (`nvrtc-cache config` lists the settings)")
                                      : "; did you mean " + variable.suggestion + "?");
}

std::string suggest_key(std::string_view key) {
  if (const SettingSpec* spec = find_setting(key)) return spec->key == key ? "" : std::string(spec->key);
  std::vector<std::string> keys;
  for (const SettingSpec& s : kSettings) keys.emplace_back(s.key);
  std::string best = util::closest(key, keys);
  if (best.empty()) {  // a misspelled variable in a file: its setting's key
    const std::string variable = suggest_variable(key);
    if (const SettingSpec* spec = variable.empty() ? nullptr : find_setting(variable)) best = spec->key;
  }
  return best;
}

std::span<const SettingSpec> settings() { return kSettings; }

std::string shown_value(const SettingSpec& spec, std::string_view value) {
  return spec.key == "remote" ? store::remote::shown_urls(value) : std::string(value);
}

const SettingSpec* find_setting(std::string_view key_or_env) {
  for (const SettingSpec& s : kSettings) {
    if (s.key == key_or_env || s.env == key_or_env) return &s;
  }
  return nullptr;
}

std::size_t setting_index(const SettingSpec& spec) { return static_cast<std::size_t>(&spec - kSettings); }

std::string_view type_name(SettingType type) {
  switch (type) {
    case SettingType::kBool:
      return "bool";
    case SettingType::kPath:
      return "path";
    case SettingType::kSize:
      return "size";
    case SettingType::kLogLevel:
      return "level";
    case SettingType::kText:
      return "text";
    case SettingType::kSeconds:
      return "seconds";
    case SettingType::kNumber:
      return "number";
  }
  return "text";
}

}  // namespace nvrtc_cache::core
