// Helpers of the suites that run the nvrtc-cache command as a process (tests/integration/cli_*.cc and
// others):
// write a file, run the command, and the environment of a user with nothing configured.
// Contract: test-only, header-only; each cli() call is a separate process. The including target
// defines NVRTC_CACHE_CLI_PATH (the built command).
#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/settings.h"
#include "tests/support/harness.h"
#include "tests/support/process.h"

namespace nvrtc_cache::testing {

// Writes `text` to `path`, creating its directories.
inline void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The lines of `text`, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Runs `nvrtc-cache ARGS...` with `env` changed, in `cwd` ("": the test's).
inline ProcessResult cli(std::vector<std::string> args, const EnvVars& env, const std::string& cwd = "") {
  args.insert(args.begin(), NVRTC_CACHE_CLI_PATH);
  return run_process(args, env, cwd);
}

// A user whose configuration lives under `home`, with no system file (unless written to
// home/system.conf) and no setting in the environment.
inline EnvVars user_env(const TempDir& home) {
  EnvVars env = {{"HOME", home.path()},
                 {"XDG_CONFIG_HOME", std::nullopt},
                 {"XDG_CACHE_HOME", std::nullopt},
                 {"NVRTC_CACHE_CONFIG", std::nullopt},
                 {"NVRTC_CACHE_SYSTEM_CONFIG", home.path() + "/system.conf"},
                 {"COLUMNS", std::nullopt}};
  for (const core::SettingSpec& s : core::settings()) env[std::string(s.env)] = std::nullopt;
  return env;
}

}  // namespace nvrtc_cache::testing
