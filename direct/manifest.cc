#include "direct/manifest.h"

#include <blake2.h>

#include <algorithm>
#include <cstring>
#include <tuple>

namespace nvrtc_cache::direct {
namespace {

constexpr std::string_view kMagic = "NVMF";

}  // namespace

std::vector<keying::CacheKey> Manifest::add(ManifestResult result) {
  std::vector<keying::CacheKey> dropped;
  std::erase_if(results, [&](const ManifestResult& r) { return r.result_key == result.result_key; });
  results.insert(results.begin(), std::move(result));
  while (results.size() > kMaxResultsPerManifest) {
    dropped.push_back(results.back().result_key);
    results.pop_back();
  }
  return dropped;
}

std::string encode_manifest(const Manifest& manifest) {
  util::ByteWriter w;
  util::begin_frame(w, kMagic, kManifestFormatVersion);
  w.u64(manifest.results.size());
  for (const auto& r : manifest.results) {
    w.raw(keying::as_bytes(r.result_key));
    r.dependencies.encode(w);
  }
  util::append_checksum(w);
  return std::move(w.str());
}

std::optional<Manifest> decode_manifest(std::string_view bytes) {
  std::optional<util::ByteReader> frame = util::open_frame(bytes, kMagic, kManifestFormatVersion);
  if (!frame) return std::nullopt;
  util::ByteReader& r = *frame;
  std::uint64_t n = 0;
  // One result: its key, then a dependency set (at least its two counts and the date's length).
  constexpr std::size_t kMinResultBytes = std::tuple_size_v<keying::CacheKey> + 3 * util::kU64Bytes;
  if (!r.count(n, kMinResultBytes) || n > kMaxResultsPerManifest) return std::nullopt;
  Manifest m;
  m.results.resize(n);
  for (auto result = m.results.begin(); result != m.results.end(); ++result) {
    std::string key;
    if (!r.raw(result->result_key.size(), key) || !result->dependencies.decode(r)) return std::nullopt;
    std::memcpy(result->result_key.data(), key.data(), key.size());
    if (std::any_of(m.results.begin(), result,
                    [&](const ManifestResult& earlier) { return earlier.result_key == result->result_key; })) {
      return std::nullopt;  // add() keeps each result once
    }
  }
  if (!r.at_end()) return std::nullopt;
  return m;
}

keying::CacheKey result_key(const keying::CacheKey& direct_key, const DependencySet& dependencies) {
  util::ByteWriter w;
  w.raw("nvrtc-cache/result/1");
  w.raw(keying::as_bytes(direct_key));
  dependencies.encode_identity(w);
  keying::CacheKey key{};
  blake2b(key.data(), w.str().data(), nullptr, key.size(), w.str().size(), 0);
  return key;
}

std::string manifest_store_key(const keying::CacheKey& direct_key) {
  return kManifestPrefix + std::string(keying::as_bytes(direct_key));
}
std::string result_store_key(const keying::CacheKey& key) { return kResultPrefix + std::string(keying::as_bytes(key)); }
std::string working_directory_marker_key(const keying::CacheKey& key) {
  return kWorkingDirectoryMarkerPrefix + std::string(keying::as_bytes(key));
}
std::string handle_result_store_key(const keying::CacheKey& key) {
  return kHandleResultPrefix + std::string(keying::as_bytes(key));
}

}  // namespace nvrtc_cache::direct
