// nvrtc-cache config [get KEY | set KEY VALUE] [--markdown]: every effective setting with its value
// and where it came from; one setting's value; a setting written to the user file (other lines and
// comments kept). Everything comes from the settings table (core/settings.h).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "core/config.h"
#include "core/settings.h"
#include "platform/own_file.h"
#include "tools/commands.h"
#include "tools/cache/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

core::EnvLookup process_environment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::string shown(const core::SettingSpec& spec, const core::Config& config) {
  std::string value = spec.show(config);
  return value.empty() ? "(" + std::string(spec.default_text) + ")" : value;
}

int list(bool markdown) {
  if (markdown) {
    // The settings table of docs/configuration.md.
    fmt::print(
        "Every setting comes from, in this order of precedence: its environment variable; the user file "
        "(`$NVRTC_CACHE_CONFIG` if set, else `$XDG_CONFIG_HOME/nvrtc-cache/nvrtc-cache.conf`, else "
        "`~/.config/nvrtc-cache/nvrtc-cache.conf`); the system file (`/etc/nvrtc-cache.conf`; "
        "`$NVRTC_CACHE_SYSTEM_CONFIG` names another, for packagers and tests); its default. Files hold "
        "`key = value` lines; lines starting with `#` are comments. In a path, a leading `~` is `$HOME` and `$VAR` "
        "or `${{VAR}}` is that variable, as in ccache. A bad value gets one message naming the setting (and the file "
        "and line) and the value used instead; an unknown key or a misspelled `NVRTC_CACHE_` variable gets a "
        "\"did you mean\". `nvrtc-cache config` shows every "
        "effective value and where it came from; `nvrtc-cache config set KEY VALUE` writes the user file.\n\n");
    fmt::print("| key (file) | variable | type | default | meaning |\n|---|---|---|---|---|\n");
    for (const core::SettingSpec& s : core::settings()) {
      fmt::print("| `{}` | `{}` | {} | {} | {} |\n", s.key, s.env, core::type_name(s.type),
                 s.default_text.find_first_of("` ") == std::string_view::npos ? fmt::format("`{}`", s.default_text)
                                                                              : std::string(s.default_text),
                 s.help);
    }
    return 0;
  }
  const core::Config config = load_settings();
  const core::ConfigPaths paths = core::config_paths(process_environment());
  fmt::print("# system file: {}\n# user file:   {}\n", paths.system, paths.user.empty() ? "(none)" : paths.user);
  for (const core::SettingSpec& s : core::settings()) {
    fmt::print("({}) {} = {}\n", config.origins[core::setting_index(s)], s.key, shown(s, config));
  }
  return 0;
}

// "unknown setting 'max_sise'; did you mean 'max_size'?"
std::string unknown_setting(const std::string& key) {
  const std::string suggestion = core::suggest_key(key);
  return "unknown setting '" + key + "'" + (suggestion.empty() ? "" : "; did you mean '" + suggestion + "'?");
}

int get(const CLI::App& command, const std::string& key) {
  const core::SettingSpec* spec = core::find_setting(key);
  if (spec == nullptr) return usage_error(command, unknown_setting(key));
  const core::Config config = load_settings();
  fmt::print("{}\n", spec->show(config));
  return 0;
}

// Writes `key = value` into the user file: the first line setting `key` is replaced (later ones
// are dropped), or the line is appended; every other line is kept as it was.
int set(const CLI::App& command, const std::string& key, const std::string& value) {
  const core::SettingSpec* spec = core::find_setting(key);
  if (spec == nullptr) return usage_error(command, unknown_setting(key));
  if (!value.empty()) {
    core::Config scratch;
    // A path is checked as it will be read ($VAR and ~ expanded) and written as given.
    std::optional<std::string> problem;
    std::string checked = value;
    if (spec->type == core::SettingType::kPath) {
      if (auto expanded = core::expand_path(value, process_environment(), &problem)) checked = *expanded;
    }
    if (!problem) problem = spec->apply(scratch, checked);
    if (problem) {
      return usage_error(command, fmt::format("{} = {} {}", spec->key, core::shown_value(*spec, value), *problem));
    }
  }
  const std::string path = core::config_paths(process_environment()).user;
  if (path.empty()) {
    fmt::print(stderr, "nvrtc-cache: no user configuration file (set HOME, XDG_CONFIG_HOME or NVRTC_CACHE_CONFIG)\n");
    return 1;
  }
  const core::ConfigFileText existing = core::read_config_file(path);
  if (!existing.problem.empty()) {
    fmt::print(stderr, "nvrtc-cache: {} {}; not changed\n", path, existing.problem);
    return 1;
  }
  std::string text = existing.text.value_or("");
  std::string out;
  bool written = false;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto parsed = core::parse_config_line(line);
    const core::SettingSpec* named = parsed ? core::find_setting(parsed->key) : nullptr;
    if (named == spec) {
      if (!written) out += fmt::format("{} = {}\n", spec->key, value);
      written = true;
      continue;
    }
    out += line + "\n";
  }
  if (!written) out += fmt::format("{} = {}\n", spec->key, value);
  // The directory (0700 when created here), then the file, replaced atomically.
  if (std::string why; !platform::replace_own_file(path, out, &why)) {
    fmt::print(stderr, "nvrtc-cache: cannot replace {}: {}\n", path, why);
    return 1;
  }
  fmt::print("{} = {} (in {})\n", spec->key, core::shown_value(*spec, value), path);
  if (const char* env = std::getenv(std::string(spec->env).c_str()); env && *env) {
    fmt::print(stderr, "nvrtc-cache: note: {} is set in the environment and takes precedence\n", spec->env);
  }
  return 0;
}

struct ConfigArguments {
  bool markdown = false;
  std::string key, value;
};

}  // namespace

void add_config_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand(
      "config",
      "Show every setting, its effective value and where it came from (environment, user file, system "
      "file, default). Precedence: environment > user file > system file > default.");
  auto arguments = std::make_shared<ConfigArguments>();
  command->add_flag("--markdown", arguments->markdown,
                    "print the settings table as Markdown (docs/configuration.md's)");
  CLI::App* get_command = command->add_subcommand("get", "Print one setting's effective value.");
  get_command->add_option("KEY", arguments->key, "the setting (file key or variable)")->required();
  CLI::App* set_command = command->add_subcommand(
      "set", "Write KEY = VALUE into the user file (other lines and comments are kept); an empty VALUE unsets it.");
  set_command->add_option("KEY", arguments->key, "the setting (file key or variable)")->required();
  set_command->add_option("VALUE", arguments->value, "the value")->required();
  get_command->callback([&outcome, get_command, arguments] { outcome.exit_code = get(*get_command, arguments->key); });
  set_command->callback(
      [&outcome, set_command, arguments] { outcome.exit_code = set(*set_command, arguments->key, arguments->value); });
  command->callback([&outcome, command, arguments] {
    if (command->get_subcommands().empty()) outcome.exit_code = list(arguments->markdown);
  });
}

}  // namespace nvrtc_cache::tools
