// The C API's entries (api/api_entry.h): their store keys and their encoding, as untrusted bytes.
#include "api/api_entry.h"

#include <gtest/gtest.h>

#include "direct/manifest.h"

namespace nvrtc_cache::api {
namespace {

TEST(ApiEntry, StoreKeysAreTheirOwnNamespaceOfThirtyThreeBytes) {
  const std::string key = api_store_key("k");
  EXPECT_EQ(key.size(), 33u);
  EXPECT_EQ(key[0], 'A');
  EXPECT_TRUE(is_api_store_key(key));
  EXPECT_NE(direct::kResultPrefix, key[0]);
  EXPECT_NE(direct::kManifestPrefix, key[0]);
  EXPECT_NE(direct::kHandleResultPrefix, key[0]);
  EXPECT_EQ(api_store_key("k"), key);
  EXPECT_NE(api_store_key("k2"), key);
  EXPECT_NE(api_store_key(""), api_store_key(std::string(1, '\0')));
  EXPECT_FALSE(is_api_store_key("R" + key.substr(1)));
  EXPECT_FALSE(is_api_store_key(key.substr(0, 32)));
}

TEST(ApiEntry, RoundTripsAndAnswersOnlyItsOwnKey) {
  const std::string key("a\0b", 3), value(
                                        "\x7f"
                                        "ELF\0\0",
                                        6);
  const std::string bytes = encode_api_entry(key, value);
  const auto entry = decode_api_entry(bytes);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->key, key);
  EXPECT_EQ(entry->value, value);
  EXPECT_EQ(value_for_key(bytes, key), value);
  EXPECT_FALSE(value_for_key(bytes, "a"));
  EXPECT_FALSE(value_for_key(bytes, key + "c"));
  const auto empty = decode_api_entry(encode_api_entry("", ""));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->key.empty() && empty->value.empty());
}

TEST(ApiEntry, RefusesTruncatedForeignAndOverlongBytes) {
  const std::string bytes = encode_api_entry("key", "value");
  for (std::size_t n = 0; n < kApiEntryHeaderSize + 3; ++n) EXPECT_FALSE(decode_api_entry(bytes.substr(0, n))) << n;
  std::string other_version = bytes;
  other_version[0] = 2;
  EXPECT_FALSE(decode_api_entry(other_version));
  std::string overlong = bytes;
  overlong[1] = 9;  // a key of 9 bytes, 8 there
  EXPECT_FALSE(decode_api_entry(overlong));
  std::string huge = bytes;
  for (int i = 1; i <= 8; ++i) huge[static_cast<std::size_t>(i)] = '\xff';
  EXPECT_FALSE(decode_api_entry(huge));
}

}  // namespace
}  // namespace nvrtc_cache::api
