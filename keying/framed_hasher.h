// FramedHasher: BLAKE2b-256 over labelled, length-framed fields, the hash every cache key is made with
// (keying/cache_key.h, keying/handle_inputs.h).
// Contract: a value type used on one thread; no I/O.
#pragma once

#include <blake2.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "keying/cache_key.h"
#include "util/binary_io.h"

namespace nvrtc_cache::keying {

// Every field is: label length (1 byte), label, payload length (8 bytes, little-endian), payload.
// Framing both label and payload makes every encoding prefix-free, so no two different field splits
// ("ab","c" vs "a","bc") hash the same bytes.
class FramedHasher {
 public:
  FramedHasher() { blake2b_init(&state_, std::tuple_size_v<CacheKey>); }

  void field(std::string_view label, std::string_view payload) {
    const auto label_size = static_cast<std::uint8_t>(label.size());
    update(&label_size, 1);
    update(label.data(), label.size());
    write_u64(payload.size());
    update(payload.data(), payload.size());
  }

  void count_field(std::string_view label, std::uint64_t count) {
    char bytes[8];
    util::store_le(bytes, count, sizeof bytes);
    field(label, {bytes, sizeof bytes});
  }

  CacheKey finish() {
    CacheKey key{};
    blake2b_final(&state_, key.data(), key.size());
    return key;
  }

 private:
  void write_u64(std::uint64_t value) {
    char bytes[8];
    util::store_le(bytes, value, sizeof bytes);
    update(bytes, sizeof bytes);
  }
  void update(const void* data, std::size_t size) {
    blake2b_update(&state_, static_cast<const std::uint8_t*>(data), size);
  }

  blake2b_state state_;
};

}  // namespace nvrtc_cache::keying
