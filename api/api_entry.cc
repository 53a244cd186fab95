#include "api/api_entry.h"

#include <blake2.h>

#include <array>
#include <cstring>

namespace nvrtc_cache::api {
namespace {

constexpr std::string_view kKeyDomain = "nvrtc-cache/api-key/1";

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

std::string api_store_key(std::string_view caller_key) {
  std::array<std::uint8_t, 32> digest{};
  blake2b_state state;
  blake2b_init(&state, digest.size());
  // The domain, then the key's length, then the key: no other input of this hash frames the same.
  std::string frame(kKeyDomain);
  frame.push_back('\0');
  put_u64(frame, caller_key.size());
  blake2b_update(&state, reinterpret_cast<const std::uint8_t*>(frame.data()), frame.size());
  blake2b_update(&state, reinterpret_cast<const std::uint8_t*>(caller_key.data()), caller_key.size());
  blake2b_final(&state, digest.data(), digest.size());
  std::string key(1, kApiEntryPrefix);
  key.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return key;
}

bool is_api_store_key(std::string_view store_key) {
  return store_key.size() == kApiStoreKeySize && store_key[0] == kApiEntryPrefix;
}

std::string encode_api_entry(std::string_view caller_key, std::string_view value) {
  std::string out;
  out.reserve(kApiEntryHeaderSize + caller_key.size() + value.size());
  out.push_back(static_cast<char>(kApiEntryFormatVersion));
  put_u64(out, caller_key.size());
  out.append(caller_key);
  out.append(value);
  return out;
}

std::optional<ApiEntryView> decode_api_entry(std::string_view bytes) {
  if (bytes.size() < kApiEntryHeaderSize) return std::nullopt;
  if (static_cast<std::uint8_t>(bytes[0]) != kApiEntryFormatVersion) return std::nullopt;
  const std::uint64_t key_size = get_u64(bytes.data() + 1);
  const std::size_t rest = bytes.size() - kApiEntryHeaderSize;
  if (key_size > rest) return std::nullopt;
  const auto size = static_cast<std::size_t>(key_size);
  return ApiEntryView{bytes.substr(kApiEntryHeaderSize, size), bytes.substr(kApiEntryHeaderSize + size)};
}

std::optional<std::string_view> value_for_key(std::string_view bytes, std::string_view caller_key) {
  const std::optional<ApiEntryView> entry = decode_api_entry(bytes);
  if (!entry || entry->key != caller_key) return std::nullopt;
  return entry->value;
}

}  // namespace nvrtc_cache::api
