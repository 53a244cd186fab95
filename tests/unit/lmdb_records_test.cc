// The LMDB store's record codecs and layout checks, on crafted bytes.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "store/lmdb/page_layout.h"
#include "store/lmdb/records.h"
#include "util/binary_io.h"

namespace nvrtc_cache::store {
namespace {

std::string le64s(std::initializer_list<std::uint64_t> values) {
  util::ByteWriter w;
  for (const std::uint64_t v : values) w.u64(v);
  return w.str();
}

TEST(LmdbRecords, AccessRecordRoundTripsAndNeedsExactlyItsSize) {
  const AccessRecord record{123, -5, std::numeric_limits<std::int64_t>::min()};
  std::string bytes(kAccessRecordSize, '\0');
  encode_access(record, bytes.data());
  EXPECT_EQ(decode_access(bytes), record);
  EXPECT_FALSE(decode_access(bytes + "x"));
  EXPECT_FALSE(decode_access(bytes.substr(1)));
  EXPECT_EQ(decode_le64(le64s({42})), 42u);
  EXPECT_FALSE(decode_le64("1234567"));
}

TEST(LmdbRecords, FreeListCountWhoseByteSizeWrapsIsRejected) {
  // count * 8 + 8 wraps to 8 for this count: an 8-byte record would have passed and been walked.
  EXPECT_FALSE(id_list_sound(le64s({std::uint64_t{1} << 61}), 100));
  EXPECT_FALSE(id_list_sound(le64s({~std::uint64_t{0}, 5}), 100));
  EXPECT_TRUE(id_list_sound(le64s({2, 9, 3}), 100));
  EXPECT_FALSE(id_list_sound(le64s({2, 3, 9}), 100));  // not descending
  EXPECT_FALSE(id_list_sound(le64s({1, 101}), 100));   // beyond the file
  EXPECT_TRUE(id_list_sound(le64s({0}), 100));
}

TEST(LmdbRecords, OverflowPageArithmeticIsChecked) {
  EXPECT_EQ(overflow_pages(4096 - 16, 4096), 1u);
  EXPECT_EQ(overflow_pages(4096 - 15, 4096), 2u);
  EXPECT_FALSE(overflow_pages(~std::uint64_t{0}, 4096));
  EXPECT_FALSE(overflow_pages(1, 0));
  std::string header(kLmdbPageHeaderSize, '\0');
  header[10] = 0x04;  // P_OVERFLOW
  header[12] = 2;     // pages
  EXPECT_TRUE(overflow_header_sound(header, 5000, 4096));
  EXPECT_FALSE(overflow_header_sound(header, 9000, 4096));
  EXPECT_FALSE(overflow_header_sound(header, ~std::uint64_t{0} - 3, 4096));
  EXPECT_FALSE(overflow_header_sound(header.substr(1), 5000, 4096));
}

std::string meta_page(std::uint32_t page_size, std::uint64_t last_page) {
  util::ByteWriter w;
  w.raw(std::string(16, '\0'));
  w.u32(0xBEEFC0DE);
  w.u32(1);
  w.u64(0);
  w.u64(1 << 20);
  w.u32(page_size);
  w.raw(std::string(2 * 48 - 4, '\0'));
  w.u64(last_page);
  w.u64(7);
  return w.str();
}

TEST(LmdbRecords, MetaPageSizesAreChecked) {
  const auto meta = parse_lmdb_meta(meta_page(4096, 9));
  ASSERT_TRUE(meta);
  EXPECT_EQ(data_file_bytes_needed(*meta), 10u * 4096);
  EXPECT_FALSE(parse_lmdb_meta(meta_page(4097, 9)));
  EXPECT_FALSE(parse_lmdb_meta(meta_page(4096, 9).substr(1)));
  // (last_page + 1) * page_size wraps: these claimed 0 and 4096 bytes needed.
  EXPECT_FALSE(data_file_bytes_needed(*parse_lmdb_meta(meta_page(4096, ~std::uint64_t{0}))));
  EXPECT_FALSE(data_file_bytes_needed(*parse_lmdb_meta(meta_page(4096, std::uint64_t{1} << 52))));
}

}  // namespace
}  // namespace nvrtc_cache::store
