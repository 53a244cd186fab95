// The statistics of a cache this user can read but not write (a prewarmed image's cache on a
// read-only mount, a cache another user owns): its hits are served, and counted in a counters file
// of the user's own, <fallback directory>/read-only-counts/<16 hex digits naming the cache
// directory>/counters (the fallback directory is node-local and per user: core/config.h). `nvrtc-cache
// stats` adds those counts to the cache's own and says where they are kept.
// Contract: filesystem access only through the given Env (the counters file itself is mapped by path:
// store/counter_file.h); thread-compatible; never throws except std::bad_alloc; a problem is said
// through *problem and answered with nullptr.
#pragma once

#include <memory>
#include <string>

#include "platform/env.h"
#include "store/counter_file.h"

namespace nvrtc_cache::store {

// Where the counts of the read-only cache at `cache_directory` go; "" without a fallback directory.
std::string read_only_counts_directory(const std::string& cache_directory, const std::string& fallback_directory);

// Its counters file, the directory created (0700) when `create`; nullptr (with *problem set, or left
// empty when the file is only absent and not `create`) when it cannot be used.
std::unique_ptr<CounterFile> open_read_only_counts(const std::string& cache_directory,
                                                   const std::string& fallback_directory, bool create,
                                                   std::string* problem, platform::Env& env = *platform::Env::system());

}  // namespace nvrtc_cache::store
