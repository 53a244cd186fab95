#include "store/envelope.h"

#include <xxhash.h>

#include <array>
#include <cstring>

#include "util/binary_io.h"

namespace nvrtc_cache::store {
namespace {

constexpr std::array<char, 4> kMagic = {'N', 'V', 'C', 'E'};
constexpr std::size_t kMagicOffset = 0;
constexpr std::size_t kVersionOffset = 4;
constexpr std::size_t kLengthOffset = 8;
constexpr std::size_t kKeyEchoOffset = 16;
constexpr std::size_t kKeyEchoSize = 16;
static_assert(kKeyEchoOffset + kKeyEchoSize == kEnvelopeHeaderSize);

void store_le64(char* out, std::uint64_t value) { util::store_le(out, value, 8); }
std::uint64_t load_le64(const char* in) { return util::load_le(in, 8); }

std::array<char, kKeyEchoSize> key_echo(std::string_view key) {
  const XXH128_hash_t hash = XXH3_128bits(key.data(), key.size());
  std::array<char, kKeyEchoSize> echo{};
  store_le64(echo.data(), hash.low64);
  store_le64(echo.data() + 8, hash.high64);
  return echo;
}

std::uint64_t checksum(const char* data, std::size_t size) { return XXH3_64bits(data, size); }

}  // namespace

void wrap_value_into(std::string_view key, std::string_view payload, char* out) noexcept {
  std::memcpy(out + kMagicOffset, kMagic.data(), kMagic.size());
  util::store_le(out + kVersionOffset, kEnvelopeVersion, 4);
  store_le64(out + kLengthOffset, payload.size());
  const auto echo = key_echo(key);
  std::memcpy(out + kKeyEchoOffset, echo.data(), echo.size());
  if (!payload.empty()) std::memcpy(out + kEnvelopeHeaderSize, payload.data(), payload.size());
  const std::size_t covered = kEnvelopeHeaderSize + payload.size();
  store_le64(out + covered, checksum(out, covered));
}

std::string wrap_value(std::string_view key, std::string_view payload) {
  std::string stored(wrapped_size(payload.size()), '\0');
  wrap_value_into(key, payload, stored.data());
  return stored;
}

std::optional<std::string_view> unwrap_value(std::string_view key, std::string_view stored) noexcept {
  if (stored.size() < kEnvelopeOverhead) return std::nullopt;
  const char* data = stored.data();
  if (std::memcmp(data + kMagicOffset, kMagic.data(), kMagic.size()) != 0) return std::nullopt;
  if (util::load_le(data + kVersionOffset, 4) != kEnvelopeVersion) return std::nullopt;
  const std::size_t payload_size = payload_size_of(stored.size());
  if (load_le64(data + kLengthOffset) != payload_size) return std::nullopt;
  const auto echo = key_echo(key);
  if (std::memcmp(data + kKeyEchoOffset, echo.data(), echo.size()) != 0) return std::nullopt;
  const std::size_t covered = kEnvelopeHeaderSize + payload_size;
  if (load_le64(data + covered) != checksum(data, covered)) return std::nullopt;
  return stored.substr(kEnvelopeHeaderSize, payload_size);
}

}  // namespace nvrtc_cache::store
