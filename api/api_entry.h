// API entries: how the C API (include/nvrtc_cache.h) stores a caller's value under a caller's key in
// the store it shares with the shim. The store key is kApiEntryPrefix followed by the 32-byte BLAKE2b
// digest of the caller's key (domain-separated): 33 bytes, like the shim's keys ('M', 'R', 'L':
// direct/manifest.h), and in a keyspace of its own, so that no API entry can be read as a shim entry
// or the other way round. The stored value repeats the caller's whole key before the value, and a
// read answers only when that key is the one asked for: two keys whose digests collided would be two
// misses, never a wrong value.
// Encoding: format version (u8, kApiEntryFormatVersion), key length (u64, little-endian), the key,
// the value (the rest).
// Contract: pure functions, thread-safe, no I/O, never throw on bad input (std::bad_alloc aside).
// The bytes decoded are untrusted (a store, a shared tier, an import): decode_api_entry() returns
// nullopt for anything truncated, of another version, or whose key length overruns the bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "direct/manifest.h"

namespace nvrtc_cache::api {

using direct::kApiEntryPrefix;
inline constexpr std::size_t kApiStoreKeySize = 33;
inline constexpr std::uint8_t kApiEntryFormatVersion = 1;
inline constexpr std::size_t kApiEntryHeaderSize = 1 + 8;

// 'A' + BLAKE2b-256("nvrtc-cache/api-key/1" framing, key).
std::string api_store_key(std::string_view caller_key);
bool is_api_store_key(std::string_view store_key);

std::string encode_api_entry(std::string_view caller_key, std::string_view value);

struct ApiEntryView {
  std::string_view key;
  std::string_view value;
};
std::optional<ApiEntryView> decode_api_entry(std::string_view bytes);

// The value stored for `caller_key` in `bytes`, or nullopt when `bytes` does not decode or holds
// another key.
std::optional<std::string_view> value_for_key(std::string_view bytes, std::string_view caller_key);

}  // namespace nvrtc_cache::api
