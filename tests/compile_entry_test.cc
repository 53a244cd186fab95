#include <gtest/gtest.h>

#include "shim/compile_entry.h"

namespace nvrtc_cache::shim {
namespace {

CompileEntry sample() {
  CompileEntry e;
  e.compile_rc = 6;
  e.log = {0, true, 12, 0, std::string("error: x\n\0\0\0", 12)};
  e.ptx = {0, true, 5, 0, "ptx\n"};
  e.ptx.bytes.push_back('\0');
  e.cubin = {0, true, 0, 0, ""};
  e.ltoir = {0, false, 0, 3, ""};
  e.lowered_names = {{"k<int>", 0, true, false, "_Z1kIiEvv"}, {"bad", 10, true, true, ""}};
  e.unknown_name = {"", 10, true, true, ""};
  e.pch_create_status = 13;
  e.pch_heap_required_written = true;
  e.compile_nanos = 123456789;
  return e;
}

void expect_same(const CompileEntry& a, const CompileEntry& b) {
  EXPECT_EQ(encode_entry(a), encode_entry(b));
  EXPECT_EQ(a.compile_rc, b.compile_rc);
  EXPECT_EQ(a.log.bytes, b.log.bytes);
  EXPECT_EQ(a.ptx.bytes, b.ptx.bytes);
  EXPECT_EQ(a.ltoir.data_rc, b.ltoir.data_rc);
  ASSERT_EQ(a.lowered_names.size(), b.lowered_names.size());
  EXPECT_EQ(a.lowered_names[0].lowered, b.lowered_names[0].lowered);
  EXPECT_EQ(a.unknown_name.rc, b.unknown_name.rc);
  EXPECT_EQ(a.compile_nanos, b.compile_nanos);
}

TEST(CompileEntry, RoundTrips) {
  const CompileEntry e = sample();
  auto decoded = decode_entry(encode_entry(e));
  ASSERT_TRUE(decoded.has_value());
  expect_same(e, *decoded);
}

TEST(CompileEntry, RejectsEveryTruncation) {
  const std::string bytes = encode_entry(sample());
  for (std::size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(decode_entry(bytes.substr(0, n))) << n;
}

TEST(CompileEntry, RejectsEverySingleBitFlip) {
  const std::string bytes = encode_entry(sample());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ (1 << bit));
      EXPECT_FALSE(decode_entry(damaged)) << "byte " << i << " bit " << bit;
    }
  }
}

TEST(CompileEntry, RejectsTrailingGarbageAndOtherVersions) {
  std::string bytes = encode_entry(sample());
  EXPECT_FALSE(decode_entry(bytes + "x"));
  EXPECT_FALSE(decode_entry(""));
  EXPECT_FALSE(decode_entry(std::string(64, '\0')));
}

}  // namespace
}  // namespace nvrtc_cache::shim
