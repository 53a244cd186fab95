#include "tools/cache/open_cache.h"

#include <cstdio>
#include <string_view>

#include "core/settings.h"
#include "platform/env.h"

extern char** environ;

namespace nvrtc_cache::tools {

std::vector<UnknownVariable> unknown_variables() {
  return core::unknown_variables(platform::Env::system()->environment_variable_names());
}

core::Config load_settings() {
  core::Config config = core::config_from_process_environment();
  static bool reported = false;
  if (!reported) {
    reported = true;
    for (const std::string& problem : config.problems) std::fprintf(stderr, "nvrtc-cache: %s\n", problem.c_str());
    // Only the likely misspellings: other NVRTC_CACHE_* variables may be another tool's (`doctor`
    // lists them all).
    for (const UnknownVariable& v : unknown_variables()) {
      if (!v.suggestion.empty()) std::fprintf(stderr, "nvrtc-cache: %s\n", unknown_variable_message(v).c_str());
    }
  }
  return config;
}

store::OpenedCache open_cache_reporting(const core::Config& config) {
  store::OpenedCache opened = store::open_cache(core::cache_policy(config));
  for (const auto& message : opened.messages) std::fprintf(stderr, "nvrtc-cache: %s\n", message.c_str());
  if (!opened.store) {
    std::fprintf(stderr, "nvrtc-cache: cannot open the cache at %s: %s\n", opened.directory.c_str(),
                 opened.status.message().c_str());
  }
  return opened;
}

}  // namespace nvrtc_cache::tools
