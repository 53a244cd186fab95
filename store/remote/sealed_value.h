// Sealed values: what a shared tier stores for one cache value. Other nodes, other users and
// whatever else can write to the tier are not trusted, so a value is self-describing and verified
// before use: a value that does not verify is a miss (and a writable tier is overwritten by the
// next write of that key).
//
// Layout (integers little-endian):
//   [0, 4)      magic "NVRT"
//   [4, 8)      format version, u32 (kSealedVersion)
//   [8, 9)      flags: bit 0 = a MAC follows; other bits zero
//   [9, 13)     key length k, u32 (at most kMaxSealedKey)
//   [13, 21)    payload length n, u64
//   [21, 21+k)  the key (the value is only ever returned for this exact key)
//   [.., +n)    the payload (the local store's value)
//   [.., +8)    XXH3-64 of every byte before it
//   [.., +64)   when flagged: keyed BLAKE2b-512 (the secret) of every byte before it, which frames
//               the key and the payload
// Trust: without a secret configured a value is accepted when its checksum verifies (signed or
// not); with one, only a value whose MAC verifies under it (else kMacRejected).
// Contract: pure functions; thread-safe; unseal never allocates, never reads past its input, and
// its payload is a view into `stored`. seal may throw std::bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "store/remote/secret.h"

namespace nvrtc_cache::store::remote {

inline constexpr std::uint32_t kSealedVersion = 1;
inline constexpr std::size_t kSealedHeaderSize = 21;
inline constexpr std::size_t kSealedChecksumSize = 8;
inline constexpr std::size_t kSealedMacSize = 64;
inline constexpr std::size_t kMaxSealedKey = 1024;

// The sealed form of (key, payload), signed when `secret` is given.
std::string seal_value(std::string_view key, std::string_view payload, const Secret* secret);

enum class UnsealCode {
  kOk,
  kCorrupt,      // not a sealed value, wrong version, sizes that do not add up, bad checksum
  kWrongKey,     // a sound value written for another key (a hash collision or a planted file)
  kMacRejected,  // a secret is configured and the value has no MAC or a wrong one
};

struct Unsealed {
  UnsealCode code = UnsealCode::kCorrupt;
  std::string_view payload;  // kOk: a view into the stored bytes
};

Unsealed unseal_value(std::string_view key, std::string_view stored, const Secret* secret) noexcept;

// The key a sealed value echoes (a view into `stored`), to list a tier whose names are hashes;
// empty when `stored` is not a sealed value. Nothing is verified: unseal_value() with this key does.
std::string_view sealed_key(std::string_view stored) noexcept;

// Size of a sealed value for a key and payload of these sizes.
constexpr std::size_t sealed_size(std::size_t key_size, std::size_t payload_size, bool signed_value) {
  return kSealedHeaderSize + key_size + payload_size + kSealedChecksumSize + (signed_value ? kSealedMacSize : 0);
}

}  // namespace nvrtc_cache::store::remote
