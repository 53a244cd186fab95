// Envelope: the on-disk wrapping of every value a persistent store keeps, so that a damaged,
// truncated or misplaced record is detected on read instead of being returned as a wrong value.
//
// Layout (every integer little-endian), kEnvelopeOverhead = 40 bytes around the payload:
//   [0, 4)          magic "NVCE"
//   [4, 8)          format version, u32 (kEnvelopeVersion)
//   [8, 16)         payload length n, u64
//   [16, 32)        key echo: XXH3-128 of the key bytes (low 64 bits, then high 64 bits)
//   [32, 32 + n)    payload
//   [32 + n, 40 + n) XXH3-64 checksum of bytes [0, 32 + n), i.e. the header and the payload
//
// Contract: pure functions of their arguments; thread-safe; no I/O, no global state.
// unwrap_value() never allocates or throws and its result is a view into `stored`.
// wrap_value() allocates the result and may throw std::bad_alloc; wrap_value_into() writes into a
// caller-provided buffer (e.g. space reserved inside a database) and never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nvrtc_cache::store {

inline constexpr std::uint32_t kEnvelopeVersion = 1;
inline constexpr std::size_t kEnvelopeHeaderSize = 32;
inline constexpr std::size_t kEnvelopeTrailerSize = 8;
inline constexpr std::size_t kEnvelopeOverhead = kEnvelopeHeaderSize + kEnvelopeTrailerSize;

// Size of the envelope around a payload of `payload_size` bytes.
constexpr std::size_t wrapped_size(std::size_t payload_size) { return payload_size + kEnvelopeOverhead; }

// Payload size implied by the stored size alone (0 when too short to be an envelope). Useful for
// accounting when the envelope itself may be damaged: byte flips never change the stored size.
constexpr std::size_t payload_size_of(std::size_t stored_size) {
  return stored_size >= kEnvelopeOverhead ? stored_size - kEnvelopeOverhead : 0;
}

// Writes the envelope of (key, payload) into `out`, which must hold wrapped_size(payload.size()).
void wrap_value_into(std::string_view key, std::string_view payload, char* out) noexcept;

// The envelope of (key, payload) as a new string.
std::string wrap_value(std::string_view key, std::string_view payload);

// The payload inside `stored`, or nullopt if anything does not match: size, magic, version,
// length, key echo (the envelope was written for another key) or checksum.
std::optional<std::string_view> unwrap_value(std::string_view key, std::string_view stored) noexcept;

}  // namespace nvrtc_cache::store
