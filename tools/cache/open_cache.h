// Every command's settings, and opening the cache for a command as the shim does
// (store/cache_directory.h), saying on stderr what the user should know: bad settings, misspelled
// variables and keys, fallbacks, damage moved aside, and why the cache cannot be opened.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "core/settings.h"
#include "store/cache_directory.h"

namespace nvrtc_cache::tools {

// The configuration as the shim reads it (core/config.h). What is wrong with it is said on stderr,
// once per process, one line each, in the shim's words: each bad value (naming the setting, the file
// and line, and the value used instead), each unknown key, and each NVRTC_CACHE_* variable that is
// likely a misspelling of one nvrtc-cache reads ("did you mean").
core::Config load_settings();

using core::unknown_variable_message;
using core::UnknownVariable;
// The NVRTC_CACHE_* variables of this process's environment that nvrtc-cache does not read.
std::vector<UnknownVariable> unknown_variables();

// `opened.store` is null when the cache cannot be opened (already reported).
store::OpenedCache open_cache_reporting(const core::Config& config);

}  // namespace nvrtc_cache::tools
