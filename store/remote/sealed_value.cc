#include "store/remote/sealed_value.h"

#include <blake2.h>
#include <xxhash.h>

#include <array>

#include "util/binary_io.h"

namespace nvrtc_cache::store::remote {
namespace {

constexpr std::string_view kMagic = "NVRT";
constexpr std::uint8_t kHasMac = 1;

std::array<std::uint8_t, kSealedMacSize> mac_of(std::string_view bytes, const Secret& secret) {
  std::array<std::uint8_t, kSealedMacSize> mac{};
  blake2b(mac.data(), bytes.data(), secret.key.data(), mac.size(), bytes.size(), secret.size);
  return mac;
}

bool equal_constant_time(const std::uint8_t* a, const char* b, std::size_t n) {
  unsigned difference = 0;
  for (std::size_t i = 0; i < n; ++i) difference |= a[i] ^ static_cast<std::uint8_t>(b[i]);
  return difference == 0;
}

}  // namespace

std::string seal_value(std::string_view key, std::string_view payload, const Secret* secret) {
  util::ByteWriter w;
  w.str().reserve(sealed_size(key.size(), payload.size(), secret != nullptr));
  w.raw(kMagic);
  w.u32(kSealedVersion);
  w.u8(secret != nullptr ? kHasMac : 0);
  w.u32(static_cast<std::uint32_t>(key.size()));
  w.u64(payload.size());
  w.raw(key);
  w.raw(payload);
  w.u64(XXH3_64bits(w.str().data(), w.str().size()));
  if (secret != nullptr) {
    const auto mac = mac_of(w.str(), *secret);
    w.raw(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
  }
  return std::move(w.str());
}

Unsealed unseal_value(std::string_view key, std::string_view stored, const Secret* secret) noexcept {
  Unsealed out;
  std::uint32_t version = 0, key_size = 0;
  std::uint8_t flags = 0;
  std::uint64_t payload_size = 0;
  if (stored.substr(0, kMagic.size()) != kMagic) return out;
  util::ByteReader r(stored.substr(kMagic.size()));
  if (!r.u32(version) || version != kSealedVersion || !r.u8(flags) || (flags & ~kHasMac) != 0 || !r.u32(key_size) ||
      key_size > kMaxSealedKey || !r.u64(payload_size)) {
    return out;
  }
  const bool has_mac = (flags & kHasMac) != 0;
  // Sizes first, without overflow: the stored size must be exactly what the header says.
  const std::size_t fixed = sealed_size(key_size, 0, has_mac);
  if (stored.size() < fixed || payload_size != stored.size() - fixed) return out;
  const std::size_t checked = kSealedHeaderSize + key_size + payload_size;
  const std::uint64_t checksum = util::load_le(stored.data() + checked, kSealedChecksumSize);
  if (XXH3_64bits(stored.data(), checked) != checksum) return out;
  if (secret != nullptr) {
    if (!has_mac) {
      out.code = UnsealCode::kMacRejected;
      return out;
    }
    const std::size_t signed_size = checked + kSealedChecksumSize;
    const auto mac = mac_of(stored.substr(0, signed_size), *secret);
    if (!equal_constant_time(mac.data(), stored.data() + signed_size, kSealedMacSize)) {
      out.code = UnsealCode::kMacRejected;
      return out;
    }
  }
  if (stored.substr(kSealedHeaderSize, key_size) != key) {
    out.code = UnsealCode::kWrongKey;
    return out;
  }
  out.code = UnsealCode::kOk;
  out.payload = stored.substr(kSealedHeaderSize + key_size, payload_size);
  return out;
}

std::string_view sealed_key(std::string_view stored) noexcept {
  if (stored.size() < kSealedHeaderSize || stored.substr(0, kMagic.size()) != kMagic) return {};
  const std::uint64_t key_size = util::load_le(stored.data() + 9, 4);
  if (key_size > kMaxSealedKey || key_size > stored.size() - kSealedHeaderSize) return {};
  return stored.substr(kSealedHeaderSize, key_size);
}

}  // namespace nvrtc_cache::store::remote
