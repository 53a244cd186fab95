// Tests for store/envelope: the checksummed envelope every stored value is wrapped in (layout,
// round trips, and every kind of damage detected).
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "store/envelope.h"
#include "tests/support/store_fixtures.h"
#include "util/binary_io.h"

namespace nvrtc_cache::store {
namespace {

using testing::binary_value;

TEST(EnvelopeTest, RoundTrips) {
  for (const std::string& payload : {std::string(), std::string("x"), binary_value(4096, 3)}) {
    const std::string stored = wrap_value("key", payload);
    EXPECT_EQ(stored.size(), wrapped_size(payload.size()));
    EXPECT_EQ(payload_size_of(stored.size()), payload.size());
    const auto unwrapped = unwrap_value("key", stored);
    ASSERT_TRUE(unwrapped.has_value());
    EXPECT_EQ(*unwrapped, payload);
  }
}

TEST(EnvelopeTest, LayoutIsLittleEndian) {
  const std::string stored = wrap_value("k", "abc");
  EXPECT_EQ(stored.substr(0, 4), "NVCE");
  EXPECT_EQ(stored.substr(4, 4), std::string("\x01\x00\x00\x00", 4));    // version 1
  EXPECT_EQ(stored.substr(8, 8), std::string("\x03\0\0\0\0\0\0\0", 8));  // length 3
  EXPECT_EQ(stored.substr(kEnvelopeHeaderSize, 3), "abc");
}

TEST(EnvelopeTest, WrapIntoMatchesWrap) {
  const std::string payload = binary_value(100, 1);
  std::string buffer(wrapped_size(payload.size()), '\0');
  wrap_value_into("key", payload, buffer.data());
  EXPECT_EQ(buffer, wrap_value("key", payload));
}

TEST(EnvelopeTest, EveryFlippedByteIsDetected) {
  const std::string stored = wrap_value("key", binary_value(64, 2));
  for (std::size_t i = 0; i < stored.size(); ++i) {
    for (const int mask : {0x01, 0x80, 0xff}) {
      std::string damaged = stored;
      damaged[i] = static_cast<char>(damaged[i] ^ mask);
      EXPECT_FALSE(unwrap_value("key", damaged).has_value()) << "byte " << i << " mask " << mask;
    }
  }
}

TEST(EnvelopeTest, WrongKeyIsDetected) {
  const std::string stored = wrap_value("key-a", "payload");
  EXPECT_FALSE(unwrap_value("key-b", stored).has_value());
  EXPECT_FALSE(unwrap_value("", stored).has_value());
  EXPECT_TRUE(unwrap_value("key-a", stored).has_value());
}

TEST(EnvelopeTest, TruncationAndExtensionAreDetected) {
  const std::string stored = wrap_value("key", binary_value(50, 4));
  for (std::size_t size = 0; size < stored.size(); ++size) {
    EXPECT_FALSE(unwrap_value("key", std::string_view(stored).substr(0, size)).has_value()) << size;
  }
  EXPECT_FALSE(unwrap_value("key", stored + '\0').has_value());
}

TEST(EnvelopeTest, ForeignVersionIsRejected) {
  std::string stored = wrap_value("key", "payload");
  stored[4] = 2;  // a well-formed envelope of another format version, checksum recomputed
  const std::size_t covered = stored.size() - kEnvelopeTrailerSize;
  const std::uint64_t sum = XXH3_64bits(stored.data(), covered);
  util::store_le(stored.data() + covered, sum, 8);
  EXPECT_FALSE(unwrap_value("key", stored).has_value());
  stored[4] = 1;  // back to version 1 with the checksum for version 2: checksum mismatch
  EXPECT_FALSE(unwrap_value("key", stored).has_value());
}

}  // namespace
}  // namespace nvrtc_cache::store
