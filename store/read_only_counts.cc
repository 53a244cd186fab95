#include "store/read_only_counts.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

#include <xxhash.h>

#include "platform/paths.h"
#include "store/directory_handle.h"

namespace nvrtc_cache::store {

std::string read_only_counts_directory(const std::string& cache_directory, const std::string& fallback_directory) {
  if (fallback_directory.empty()) return "";
  char name[17];
  std::snprintf(name, sizeof name, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(cache_directory.data(), cache_directory.size())));
  return platform::joined_path(platform::joined_path(fallback_directory, "read-only-counts"), name);
}

std::unique_ptr<CounterFile> open_read_only_counts(const std::string& cache_directory,
                                                   const std::string& fallback_directory, bool create,
                                                   std::string* problem, platform::Env& env) {
  const std::string directory = read_only_counts_directory(cache_directory, fallback_directory);
  if (directory.empty()) {
    *problem = "no directory of this user's for the counts of a read-only cache (fallback_dir is not set)";
    return nullptr;
  }
  const DirectoryWalk walk = open_directory_path(directory, create, /*allow_shared=*/false, env);
  if (!walk.handle.valid()) {
    if (create || walk.error != ENOENT) *problem = walk.detail;
    return nullptr;
  }
  struct stat st {};
  if (!create && env.stat_at(walk.handle.fd(), "counters", &st) != 0) return nullptr;  // nothing counted yet
  return CounterFile::open(directory, create, /*shared=*/false, problem);
}

}  // namespace nvrtc_cache::store
