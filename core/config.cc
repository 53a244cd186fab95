#include "core/config.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/log.h"
#include "core/settings.h"
#include "platform/env.h"
#include "platform/own_file.h"
#include "platform/paths.h"
#include "platform/user_directories.h"
#include "store/remote/shown_url.h"

namespace nvrtc_cache::core {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Config defaults(const EnvLookup& lookup) {
  Config c;
  c.cache_dir = platform::default_cache_directory(lookup);
  c.origins.assign(settings().size(), "default");
  c.fallback_dir = platform::default_fallback_directory(lookup);
  return c;
}

// Applies one value from `origin`; a bad one keeps the value before it and says which. A path's
// `~` and `$VAR` / `${VAR}` are expanded first (expand_path).
void apply(Config& c, const SettingSpec& spec, std::string_view value, std::string origin, std::string_view named,
           const EnvLookup& lookup) {
  const std::size_t index = setting_index(spec);
  std::optional<std::string> problem;
  std::string expanded(value);
  if (spec.type == SettingType::kPath) {
    if (std::optional<std::string> path = expand_path(value, lookup, &problem)) expanded = std::move(*path);
  }
  if (!problem) problem = spec.apply(c, expanded);
  if (problem) {
    std::string shown = spec.show(c);
    if (shown.empty()) shown = spec.default_text;
    std::string where = origin.starts_with("environment ") ? "" : origin + ": ";
    c.problems.push_back(where + std::string(named) + "='" + shown_value(spec, value) + "' " + *problem + "; using " +
                         shown + " (" + c.origins[index] + ")");
    return;
  }
  c.origins[index] = std::move(origin);
}

void apply_environment(Config& c, const EnvLookup& lookup) {
  for (const SettingSpec& spec : settings()) {
    const std::string env(spec.env);
    if (auto v = lookup(env.c_str()); v && !v->empty()) apply(c, spec, *v, "environment " + env, spec.env, lookup);
  }
}

// A line of a configuration file as messages show it: at most 60 characters, control bytes as '?'.
std::string shown(std::string_view line) {
  std::string out(line.substr(0, 60));
  for (char& ch : out) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  }
  return line.size() > 60 ? out + "..." : out;
}

// At most this many messages about the lines of one file; then one that counts the rest.
constexpr std::size_t kMaxLineProblemsPerFile = 3;

void apply_text(Config& c, std::string_view text, const std::string& path, const EnvLookup& lookup);

void apply_file(Config& c, const std::string& path, const FileReader& read, const EnvLookup& lookup) {
  if (path.empty()) return;
  const ConfigFileText file = read(path);
  if (!file.text) {
    if (!file.problem.empty()) c.problems.push_back(path + " " + file.problem + "; ignored");
    return;
  }
  apply_text(c, *file.text, path, lookup);
}

// The lines of a configuration file (or of settings given as text, named `path` in messages).
void apply_text(Config& c, std::string_view whole, const std::string& path, const EnvLookup& lookup) {
  const std::string_view* text = &whole;
  std::size_t line_problems = 0;
  auto line_problem = [&](std::string message) {
    if (++line_problems <= kMaxLineProblemsPerFile) c.problems.push_back(std::move(message));
  };
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < text->size();) {
    const std::size_t end = std::min(text->find('\n', start), text->size());
    const std::string_view line(text->data() + start, end - start);
    start = end + 1;
    ++line_number;
    const std::string origin = path + ":" + std::to_string(line_number);
    const std::string_view content = trimmed(line);
    if (content.empty() || content.front() == '#') continue;
    const std::optional<ConfigLine> parsed = parse_config_line(line);
    if (!parsed) {
      line_problem(origin + ": '" + shown(store::remote::shown_urls(content)) + "' is not `key = value`; ignored");
      continue;
    }
    const SettingSpec* spec = find_setting(parsed->key);
    if (spec == nullptr || spec->key != parsed->key) {
      const std::string suggestion = suggest_key(parsed->key);
      line_problem(origin + ": unknown setting '" + shown(parsed->key) + "'" +
                   (suggestion.empty() ? "" : "; did you mean '" + suggestion + "'?") +
                   " (`nvrtc-cache config` lists them); ignored");
      continue;
    }
    if (!parsed->value.empty()) apply(c, *spec, parsed->value, origin, spec->key, lookup);
  }
  if (line_problems > kMaxLineProblemsPerFile) {
    c.problems.push_back(path + ": " + std::to_string(line_problems - kMaxLineProblemsPerFile) +
                         " more lines that are not settings; ignored");
  }
}

}  // namespace

void apply_settings_text(Config& config, std::string_view text, const std::string& origin, const EnvLookup& lookup) {
  apply_text(config, text, origin, lookup);
}

std::optional<ConfigLine> parse_config_line(std::string_view line) {
  line = trimmed(line);
  if (line.empty() || line.front() == '#') return std::nullopt;
  const std::size_t eq = line.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  ConfigLine out{std::string(trimmed(line.substr(0, eq))), std::string(trimmed(line.substr(eq + 1)))};
  if (out.key.empty()) return std::nullopt;
  return out;
}

std::optional<std::string> expand_path(std::string_view value, const EnvLookup& lookup,
                                       std::optional<std::string>* problem) {
  auto variable = [&](const std::string& name) -> std::optional<std::string> {
    std::optional<std::string> v = lookup(name.c_str());
    if (!v || v->empty()) {
      *problem = "names $" + name + ", which is not set";
      return std::nullopt;
    }
    return v;
  };
  std::string out;
  std::size_t i = 0;
  if (value.starts_with("~") && (value.size() == 1 || value[1] == '/' || value[1] == '\\')) {
    std::optional<std::string> home = lookup("HOME");
    if (!home || home->empty()) home = lookup("USERPROFILE");  // Windows
    if (!home || home->empty()) {
      *problem = "starts with ~, but $HOME is not set";
      return std::nullopt;
    }
    out = *home;
    i = 1;
  }
  auto name_char = [](char ch, bool first) {
    return ch == '_' || std::isalpha(static_cast<unsigned char>(ch)) ||
           (!first && std::isdigit(static_cast<unsigned char>(ch)));
  };
  while (i < value.size()) {
    if (value[i] != '$' || i + 1 >= value.size()) {
      out += value[i++];
      continue;
    }
    if (value[i + 1] == '{') {
      const std::size_t close = value.find('}', i + 2);
      if (close == std::string_view::npos || close == i + 2) {
        *problem = "has a ${ without a variable name and }";
        return std::nullopt;
      }
      const std::optional<std::string> v = variable(std::string(value.substr(i + 2, close - i - 2)));
      if (!v) return std::nullopt;
      out += *v;
      i = close + 1;
    } else if (name_char(value[i + 1], true)) {
      std::size_t end = i + 1;
      while (end < value.size() && name_char(value[end], false)) ++end;
      const std::optional<std::string> v = variable(std::string(value.substr(i + 1, end - i - 1)));
      if (!v) return std::nullopt;
      out += *v;
      i = end;
    } else {
      out += value[i++];  // a '$' not followed by a name is itself
    }
  }
  return out;
}

std::optional<std::uint64_t> parse_size(const std::string& text) {
  std::size_t pos = 0;
  while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) ++pos;
  if (pos == 0) return std::nullopt;
  char* end = nullptr;
  const std::string number = text.substr(0, pos);
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !(value > 0)) return std::nullopt;
  std::string unit = text.substr(pos);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("IB"))
    unit.resize(unit.size() - 2);
  else if (unit.size() > 1 && unit.ends_with("B"))
    unit.resize(unit.size() - 1);
  else if (unit.size() == 2 && unit.ends_with("I"))
    unit.resize(1);  // "10Gi"
  double scale = 1;
  if (unit.empty())
    scale = 0x1p30;  // no unit: GiB, as ccache's max_size
  else if (unit == "B")
    scale = 1;
  else if (unit == "K")
    scale = 0x1p10;
  else if (unit == "M")
    scale = 0x1p20;
  else if (unit == "G")
    scale = 0x1p30;
  else if (unit == "T")
    scale = 0x1p40;
  else
    return std::nullopt;
  const double bytes = std::floor(value * scale);
  if (bytes < 1 || bytes > 0x1p62) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::optional<std::chrono::milliseconds> parse_seconds(const std::string& text) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.')) return std::nullopt;
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(seconds >= 0) || seconds > 86400) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(seconds * 1000)));
}

Config config_from_environment(const EnvLookup& lookup) {
  Config c = defaults(lookup);
  apply_environment(c, lookup);
  return c;
}

ConfigPaths config_paths(const EnvLookup& lookup) {
  ConfigPaths paths;
  if (auto system = lookup("NVRTC_CACHE_SYSTEM_CONFIG"); system && !system->empty()) {
    paths.system = *system;
  } else {
    paths.system = platform::default_system_config_file(lookup);
  }
  if (auto named = lookup("NVRTC_CACHE_CONFIG"); named && !named->empty()) {
    paths.user = *named;
  } else {
    paths.user = platform::default_user_config_file(lookup);
  }
  return paths;
}

ConfigFileText read_config_file(const std::string& path) {
  if (path == platform::null_device()) return ConfigFileText(std::string());  // the usual way to say "no file"
  ConfigFileText file;
  file.text = platform::read_regular_file(path, kMaxConfigFileBytes, &file.problem);
  return file;
}

Config load_config(const EnvLookup& lookup, const FileReader& read) {
  Config c = defaults(lookup);
  const ConfigPaths paths = config_paths(lookup);
  apply_file(c, paths.system, read, lookup);
  apply_file(c, paths.user, read, lookup);
  apply_environment(c, lookup);
  return c;
}

store::CachePolicy cache_policy(const Config& config) {
  store::CachePolicy policy;
  policy.directory = config.cache_dir;
  policy.fallback_directory = config.fallback_dir;
  policy.max_bytes = config.max_size_bytes;
  policy.allow_shared = config.shared;
  return policy;
}

Config config_from_process_environment() {
  // getenv(3); on Windows the process's environment block (UTF-16, converted), not the CRT's copy.
  return load_config([](const char* name) { return platform::Env::system()->environment_variable(name); });
}

void log_settings_problems(const Config& config) {
  for (const std::string& problem : config.problems) log_line(LogLevel::kWarn, problem);
  for (const UnknownVariable& variable : unknown_variables(platform::Env::system()->environment_variable_names())) {
    log_line(variable.suggestion.empty() ? LogLevel::kInfo : LogLevel::kWarn, unknown_variable_message(variable));
  }
}

}  // namespace nvrtc_cache::core
