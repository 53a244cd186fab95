// Opening the cache for a CLI command, as the shim does (store/cache_directory.h), saying on stderr
// what the user should know (fallbacks, damage moved aside) and why it failed.
#pragma once

#include "core/config.h"
#include "store/cache_directory.h"

namespace nvrtc_cache::tools {

// `opened.store` is null when the cache cannot be opened (already reported).
store::OpenedCache open_cache_reporting(const core::Config& config);

}  // namespace nvrtc_cache::tools
