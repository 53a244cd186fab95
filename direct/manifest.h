// Manifest: for one direct key (the program's C API inputs), the results compiled from them, each
// with the dependency set it was compiled against, newest first (ccache's direct mode). A lookup
// validates the sets in order and the first full match names the result.
// Contract: pure encode/decode (versioned, XXH3-checksummed); the bytes decoded are untrusted:
// malformed input, more than kMaxResultsPerManifest results, a result twice or a malformed
// dependency set decodes to nullopt; thread-compatible.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "direct/dependencies.h"
#include "keying/cache_key.h"

namespace nvrtc_cache::direct {

inline constexpr std::uint32_t kManifestFormatVersion = 1;
inline constexpr std::size_t kMaxResultsPerManifest = 8;

struct ManifestResult {
  keying::CacheKey result_key{};
  DependencySet dependencies;
};

struct Manifest {
  std::vector<ManifestResult> results;  // newest first

  // Puts `result` first (replacing one with the same key) and returns the keys of results that
  // fell off the end (more than kMaxResultsPerManifest).
  std::vector<keying::CacheKey> add(ManifestResult result);
};

std::string encode_manifest(const Manifest& manifest);
std::optional<Manifest> decode_manifest(std::string_view bytes);

// The key of the result compiled from `direct_key`'s inputs against `dependencies`.
keying::CacheKey result_key(const keying::CacheKey& direct_key, const DependencySet& dependencies);

// Store keys: manifests, NVRTC's compile results and the results of the handle-based libraries
// (nvJitLink links, libNVVM compiles: core/handle_entry.h) share one keyspace, told apart by a prefix
// byte ('M', 'R', 'L'). A manifest names results of one kind only. 'A' keys are the C API's entries
// (api/api_entry.h): values callers store under their own keys, never named by a manifest. 'W' keys
// are working-directory markers: for a compile whose output embeds the working directory (-dlto...),
// the directory it was last stored from, under its inputs' key without the directory
// (keying::compute_key_without_working_directory), so that a miss from another directory says so
// (miss.working_directory). A hint of this store only: never exported, never served.
inline constexpr char kManifestPrefix = 'M';
inline constexpr char kWorkingDirectoryMarkerPrefix = 'W';
inline constexpr std::size_t kMaxMarkedDirectory = 4096;  // longer directories are not marked
inline constexpr char kResultPrefix = 'R';
inline constexpr char kHandleResultPrefix = 'L';
inline constexpr char kApiEntryPrefix = 'A';
std::string manifest_store_key(const keying::CacheKey& direct_key);
std::string result_store_key(const keying::CacheKey& result_key);
std::string handle_result_store_key(const keying::CacheKey& result_key);
std::string working_directory_marker_key(const keying::CacheKey& key_without_directory);

}  // namespace nvrtc_cache::direct
