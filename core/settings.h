// Settings: the one table of every setting nvrtc-cache reads — its key in the configuration files,
// its environment variable, its type, its default, how a value is checked and applied, how it is
// shown, and its help text. Parsing (core/config.cc), validation, `nvrtc-cache config` (display,
// get, set), the man page and docs/configuration.md are all driven by it.
// Contract: a constant table; apply() and show() are pure (no I/O), thread-safe, never throw
// except std::bad_alloc.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nvrtc_cache::core {

struct Config;

enum class SettingType { kBool, kPath, kSize, kLogLevel, kText, kSeconds, kNumber };

struct SettingSpec {
  std::string_view key;  // in a configuration file: "max_size = 10G"
  std::string_view env;  // "NVRTC_CACHE_MAX_SIZE"
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
// A value of `spec` as written (in a file, the environment or `config set`), as messages may show
// it: the URLs of `remote` through store::remote::shown_urls (no password, no token), any other
// value as it is.
std::string shown_value(const SettingSpec& spec, std::string_view value);
// The setting named by its file key or its environment variable, or nullptr.
const SettingSpec* find_setting(std::string_view key_or_env);
// The index of `spec` in settings().
std::size_t setting_index(const SettingSpec& spec);
// "bool", "path", "size", ...
std::string_view type_name(SettingType type);

// The NVRTC_CACHE_* variables read outside the settings table (which file is the configuration,
// where the shim and the real NVRTC are), for the man page and the unknown-variable check.
struct OtherVariable {
  std::string_view name;
  std::string_view help;
};
std::span<const OtherVariable> other_variables();
// Whether nvrtc-cache reads the environment variable `name` (a setting's or another above).
bool is_known_variable(std::string_view name);
// The known NVRTC_CACHE_* variable `name` is likely a misspelling of ("NVRTC_CACHE_MAX_SIZE" for
// "NVRTC_CACHE_MAXSIZE"); "" when none is close.
std::string suggest_variable(std::string_view name);
// An NVRTC_CACHE_* variable of an environment that nvrtc-cache does not read.
struct UnknownVariable {
  std::string name;
  std::string suggestion;  // the known variable it is likely a misspelling of; "" when none
};
// The unknown NVRTC_CACHE_* variables among the environment variable names `names`, in their order.
std::vector<UnknownVariable> unknown_variables(const std::vector<std::string>& names);
// "NVRTC_CACHE_MAXSIZE is not a variable nvrtc-cache reads; did you mean NVRTC_CACHE_MAX_SIZE?"
std::string unknown_variable_message(const UnknownVariable& variable);
// The setting file key `key` is likely a misspelling of ("max_size" for "max_sise" or for
// "NVRTC_CACHE_MAX_SIZE"); "" when none is close.
std::string suggest_key(std::string_view key);

}  // namespace nvrtc_cache::core
