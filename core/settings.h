// Settings: the one table of every setting nvrtc-cache reads — its key in the configuration files,
// its environment variable, its type, its default, how a value is checked and applied, how it is
// shown, and its help text. Parsing (core/config.cc), validation, `nvrtc-cache config` (display,
// get, set), the man page and the README's configuration section are all driven by it.
// Contract: a constant table; apply() and show() are pure (no I/O), thread-safe, never throw
// except std::bad_alloc.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nvrtc_cache::core {

struct Config;

enum class SettingType { kBool, kPath, kSize, kLogLevel, kText, kSeconds };

struct SettingSpec {
  std::string_view key;           // in a configuration file: "max_size = 10G"
  std::string_view env;           // "NVRTC_CACHE_MAX_SIZE"
  SettingType type;
  std::string_view default_text;  // the default, as documentation shows it
  std::string_view help;          // one sentence or two, plain words
  // Applies a non-empty `value` to `config`; on a bad value, changes nothing and returns what is
  // wrong with it ("is not a size of at least 1M (e.g. 10G, 512M)").
  std::optional<std::string> (*apply)(Config& config, std::string_view value);
  // The effective value, as a file would hold it ("" when unset).
  std::string (*show)(const Config& config);
};

// Every setting, in display order.
std::span<const SettingSpec> settings();
// The setting named by its file key or its environment variable, or nullptr.
const SettingSpec* find_setting(std::string_view key_or_env);
// The index of `spec` in settings().
std::size_t setting_index(const SettingSpec& spec);
// "bool", "path", "size", ...
std::string_view type_name(SettingType type);

}  // namespace nvrtc_cache::core
