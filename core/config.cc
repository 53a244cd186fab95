#include "core/config.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <unistd.h>

namespace nvrtc_cache::core {
namespace {

std::optional<LogLevel> parse_level(const std::string& v) {
  if (v == "off") return LogLevel::kOff;
  if (v == "error") return LogLevel::kError;
  if (v == "warn") return LogLevel::kWarn;
  if (v == "info") return LogLevel::kInfo;
  if (v == "debug") return LogLevel::kDebug;
  return std::nullopt;
}

std::string default_cache_dir(const EnvLookup& lookup) {
  if (auto xdg = lookup("XDG_CACHE_HOME"); xdg && !xdg->empty() && (*xdg)[0] == '/') {
    return *xdg + "/nvrtc-cache";
  }
  if (auto home = lookup("HOME"); home && !home->empty()) return *home + "/.cache/nvrtc-cache";
  return "/tmp/nvrtc-cache-" + std::to_string(getuid());
}

}  // namespace

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
  if (unit.ends_with("IB")) unit.resize(unit.size() - 2);
  else if (unit.size() > 1 && unit.ends_with("B")) unit.resize(unit.size() - 1);
  double scale = 1;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K") scale = 0x1p10;
  else if (unit == "M") scale = 0x1p20;
  else if (unit == "G") scale = 0x1p30;
  else if (unit == "T") scale = 0x1p40;
  else return std::nullopt;
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
  Config c;
  if (auto v = lookup("NVRTC_CACHE_DISABLE"); v && !v->empty()) {
    if (*v == "1" || *v == "true" || *v == "yes") c.disabled = true;
    else if (*v != "0" && *v != "false" && *v != "no")
      c.problems.push_back("NVRTC_CACHE_DISABLE='" + *v + "' is not 0/1; the cache stays enabled");
  }
  if (auto v = lookup("NVRTC_CACHE_DIR"); v && !v->empty()) {
    if ((*v)[0] == '/') {
      c.cache_dir = *v;
    } else {
      c.cache_dir = default_cache_dir(lookup);
      c.problems.push_back("NVRTC_CACHE_DIR='" + *v + "' is not an absolute path; using " + c.cache_dir);
    }
  } else {
    c.cache_dir = default_cache_dir(lookup);
  }
  while (c.cache_dir.size() > 1 && c.cache_dir.back() == '/') c.cache_dir.pop_back();
  if (auto v = lookup("NVRTC_CACHE_MAX_SIZE"); v && !v->empty()) {
    if (auto bytes = parse_size(*v); bytes && *bytes >= (1u << 20)) {
      c.max_size_bytes = *bytes;
    } else {
      c.problems.push_back("NVRTC_CACHE_MAX_SIZE='" + *v +
                           "' is not a size of at least 1M (e.g. 10G, 512M); using 5G");
    }
  }
  if (auto v = lookup("NVRTC_CACHE_LOG"); v && !v->empty()) {
    if (auto level = parse_level(*v)) c.log_level = *level;
    else c.problems.push_back("NVRTC_CACHE_LOG='" + *v + "' is not one of off|error|warn|info|debug; using warn");
  }
  if (auto v = lookup("NVRTC_CACHE_LOG_FILE"); v && !v->empty()) c.log_file = *v;
  if (auto v = lookup("NVRTC_CACHE_SHARED"); v && !v->empty()) {
    if (*v == "1" || *v == "true" || *v == "yes") c.shared = true;
    else if (*v != "0" && *v != "false" && *v != "no")
      c.problems.push_back("NVRTC_CACHE_SHARED='" + *v + "' is not 0/1; a shared cache stays refused");
  }
  if (auto v = lookup("NVRTC_CACHE_WAIT_TIMEOUT"); v && !v->empty()) {
    if (auto timeout = parse_seconds(*v)) {
      c.wait_timeout = *timeout;
    } else {
      c.problems.push_back("NVRTC_CACHE_WAIT_TIMEOUT='" + *v +
                           "' is not a number of seconds from 0 to 86400; using the default");
    }
  }
  if (auto v = lookup("NVRTC_CACHE_REMOTE"); v) c.remote = *v;  // each URL is checked when the tiers open
  if (auto v = lookup("NVRTC_CACHE_REMOTE_SECRET_FILE"); v && !v->empty()) c.remote_secret_file = *v;
  if (auto run = lookup("XDG_RUNTIME_DIR"); run && !run->empty() && (*run)[0] == '/') {
    c.fallback_dir = *run + "/nvrtc-cache";
  } else {
    c.fallback_dir = "/tmp/nvrtc-cache-" + std::to_string(getuid());
  }
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
  return config_from_environment([](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  });
}

}  // namespace nvrtc_cache::core
