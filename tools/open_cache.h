// Every command's settings, and opening the cache for a command as the shim does
// (store/cache_directory.h), saying on stderr what the user should know: bad settings, misspelled
// variables and keys, fallbacks, damage moved aside, and why the cache cannot be opened.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "store/cache_directory.h"

namespace nvrtc_cache::tools {

// The configuration as the shim reads it (core/config.h). What is wrong with it is said on stderr,
// once per process, one line each, in the shim's words: each bad value (naming the setting, the file
// and line, and the value used instead), each unknown key, and each NVRTC_CACHE_* variable that is
// likely a misspelling of one nvrtc-cache reads ("did you mean").
core::Config load_settings();

struct UnknownVariable {
  std::string name;
  std::string suggestion;  // the known variable it is likely a misspelling of; "" when none
};
// The NVRTC_CACHE_* variables of this process's environment that nvrtc-cache does not read.
std::vector<UnknownVariable> unknown_variables();
// "NVRTC_CACHE_MAXSIZE is not a variable nvrtc-cache reads; did you mean NVRTC_CACHE_MAX_SIZE?"
std::string unknown_variable_message(const UnknownVariable& variable);

// `opened.store` is null when the cache cannot be opened (already reported).
store::OpenedCache open_cache_reporting(const core::Config& config);

}  // namespace nvrtc_cache::tools
