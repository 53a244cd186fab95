#include "core/compile_entry.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/replay_output.h"
#include "tests/support/allocation_tracking.h"
#include "util/binary_io.h"

namespace nvrtc_cache::core {
namespace {

using testing::largest_allocation_during;
using util::ByteWriter;

CompileEntry sample() {
  CompileEntry e;
  e.compile_rc = 6;
  e.log = {0, true, 12, 0, std::string("error: x\n\0\0\0", 12)};
  e.ptx = {0, true, 5, 0, "ptx\n"};
  e.ptx.bytes.push_back('\0');
  e.cubin = {0, true, 0, 0, ""};
  e.ltoir = {0, true, 0, 3, ""};  // the data getter failed: nothing recorded
  e.optixir = {0, true, 0, 0, ""};
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

// Version 2 carries the program's description; a version 1 entry (none) still decodes, and encodes
// back to the same version 1 bytes.
TEST(CompileEntry, DescriptionIsVersionTwoAndVersionOneStillDecodes) {
  CompileEntry described = sample();
  described.description =
      EntryDescription{"kernel.cu", {"-arch=sm_80", "-lineinfo"}, {"a.h", "b.h"}, 1234, std::nullopt};
  const std::string v2 = encode_entry(described);
  const std::optional<CompileEntry> back = decode_entry(v2);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->description, described.description);
  EXPECT_EQ(v2.substr(4, 4), std::string("\x02\0\0\0", 4));
  const std::string v1 = encode_entry(sample());
  EXPECT_EQ(v1.substr(4, 4), std::string("\x01\0\0\0", 4));
  const std::optional<CompileEntry> old = decode_entry(v1);
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->description);
  EXPECT_EQ(encode_entry(*old), v1);
  for (std::size_t n = 0; n < v2.size(); ++n) EXPECT_FALSE(decode_entry(v2.substr(0, n))) << n;
}

// Version 4 adds the library that made it; a version 3 entry (without it) still decodes, as "unknown".
TEST(CompileEntry, LibraryIsVersionFourAndOlderEntriesSayUnknown) {
  CompileEntry e = sample();
  e.description = EntryDescription{"kernel.cu", {"-arch=sm_80"}, {}, 12, std::nullopt};
  e.tileir.available = true;
  e.tileir.size_written = true;
  const std::string v3 = encode_entry(e);
  EXPECT_EQ(v3.substr(4, 4), std::string("\x03\0\0\0", 4));
  const std::optional<CompileEntry> old = decode_entry(v3);
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->description->library);
  EXPECT_EQ(version_text(old->description->library), "unknown");
  EXPECT_EQ(build_id_hex(old->description->library), "");
  e.description->library = LibraryVersion{13, 5, std::string("\x5c\x0f\xff", 3)};
  const std::string v4 = encode_entry(e);
  EXPECT_EQ(v4.substr(4, 4), std::string("\x04\0\0\0", 4));
  const std::optional<CompileEntry> back = decode_entry(v4);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->description, e.description);
  EXPECT_EQ(version_text(back->description->library), "13.5");
  EXPECT_EQ(build_id_hex(back->description->library), "5c0fff");
  EXPECT_EQ(encode_entry(*back), v4);
  for (std::size_t n = 0; n < v4.size(); ++n) EXPECT_FALSE(decode_entry(v4.substr(0, n))) << n;
  // Without the newer outputs too: the library alone makes it version 4.
  CompileEntry base = sample();
  base.description = EntryDescription{"k", {}, {}, 1, LibraryVersion{13, 0, ""}};
  const std::string base_v4 = encode_entry(base);
  EXPECT_EQ(base_v4.substr(4, 4), std::string("\x04\0\0\0", 4));
  ASSERT_TRUE(decode_entry(base_v4));
  EXPECT_EQ(decode_entry(base_v4)->description, base.description);
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

TEST(CompileEntry, CaptureShapedEntriesAreWellFormed) { EXPECT_TRUE(is_well_formed(sample())); }

// A writer of the cache can recompute the checksum: encode_entry() does, for whatever it is given.
TEST(CompileEntry, RejectsARechecksummedEntryWhoseSizeAndBytesDisagree) {
  for (const std::int64_t delta : {-1, 1, 4096}) {
    CompileEntry e = sample();
    e.ptx.size = static_cast<std::uint64_t>(static_cast<std::int64_t>(e.ptx.bytes.size()) + delta);
    EXPECT_FALSE(decode_entry(encode_entry(e))) << delta;
  }
  CompileEntry failed_with_bytes = sample();
  failed_with_bytes.ltoir.bytes = std::string(7, 'x');  // a failed data getter wrote nothing
  failed_with_bytes.ltoir.size = 7;
  EXPECT_FALSE(decode_entry(encode_entry(failed_with_bytes)));
  CompileEntry failed_with_size = sample();
  failed_with_size.ltoir.size = std::uint64_t{1} << 62;  // the host would try to allocate it
  EXPECT_FALSE(decode_entry(encode_entry(failed_with_size)));
}

TEST(CompileEntry, RejectsWhatCaptureNeverRecords) {
  std::vector<CompileEntry> bad(7, sample());
  bad[0].cubin.size_written = false;
  bad[1].cubin.size_rc = NVRTC_ERROR_INVALID_PROGRAM;
  bad[2].lowered_names[0].written = false;   // unwritten, yet a name
  bad[3].lowered_names[1].lowered = "text";  // NULL, yet a name
  bad[4].unknown_name.expression = "k";
  bad[5].pch_heap_required_written = false;
  bad[5].pch_heap_required = 42;
  bad[6].lowered_names[0].lowered.push_back('\0');  // handed back as a C string
  for (std::size_t i = 0; i < bad.size(); ++i) EXPECT_FALSE(decode_entry(encode_entry(bad[i]))) << i;
}

TEST(CompileEntry, RejectsReturnCodesThatAreNoNvrtcResult) {
  for (const std::int32_t rc : {-1, kLastKnownNvrtcResult + 1, 1 << 30}) {
    std::vector<CompileEntry> bad(5, sample());
    bad[0].compile_rc = rc;
    bad[1].ltoir.data_rc = rc;
    bad[2].lowered_names[1].rc = rc;
    bad[3].pch_create_status = rc;
    bad[4].pch_heap_required_rc = rc;
    for (std::size_t i = 0; i < bad.size(); ++i) EXPECT_FALSE(decode_entry(encode_entry(bad[i]))) << rc << " " << i;
  }
  CompileEntry last = sample();
  last.compile_rc = kLastKnownNvrtcResult;
  EXPECT_TRUE(decode_entry(encode_entry(last)));
}

// Version 3 carries the outputs of NVRTCs other than 13.0 (Tile IR, 12.x's NVVM), each with whether
// the library has its getters; an entry without them is still written as version 1 or 2, and a
// version 1 or 2 entry decodes with them unavailable.
TEST(CompileEntry, TileIrAndNvvmAreVersionThreeAndOlderEntriesLackThem) {
  CompileEntry tile = sample();
  tile.tileir = {NVRTC_SUCCESS, true, 6, NVRTC_SUCCESS, std::string("tile\0\0", 6)};
  for (const bool described : {false, true}) {
    if (described) tile.description = EntryDescription{"tile.cu", {"--enable-tile"}, {}, 10, std::nullopt};
    const std::string v3 = encode_entry(tile);
    EXPECT_EQ(v3.substr(4, 4), std::string("\x03\0\0\0", 4));
    const std::optional<CompileEntry> back = decode_entry(v3);
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->tileir.available);
    EXPECT_EQ(back->tileir.bytes, tile.tileir.bytes);
    EXPECT_FALSE(back->nvvm.available);
    EXPECT_EQ(back->description.has_value(), described);
    EXPECT_EQ(encode_entry(*back), v3);
    EXPECT_EQ(back->payload_bytes(), tile.payload_bytes());
  }
  CompileEntry nvvm = sample();
  nvvm.nvvm = {NVRTC_SUCCESS, true, 0, NVRTC_SUCCESS, ""};
  ASSERT_TRUE(decode_entry(encode_entry(nvvm)));
  EXPECT_TRUE(decode_entry(encode_entry(nvvm))->nvvm.available);
  const std::optional<CompileEntry> v1 = decode_entry(encode_entry(sample()));
  ASSERT_TRUE(v1);
  EXPECT_FALSE(v1->tileir.available);
  EXPECT_FALSE(v1->nvvm.available);
}

// An output the library has no getters for is all zero; the five every NVRTC since 12.0 has are
// always there; replaying an unavailable one (never asked for) answers as for an unknown program.
TEST(CompileEntry, UnavailableOutputsAreEmptyAndTheBaseOnesAlwaysThere) {
  CompileEntry bad = sample();
  bad.tileir.bytes = "x";  // unavailable, yet holding bytes
  EXPECT_FALSE(is_well_formed(bad));
  bad = sample();
  bad.tileir.size_rc = NVRTC_ERROR_INVALID_PROGRAM;
  EXPECT_FALSE(is_well_formed(bad));
  bad = sample();
  bad.cubin = unavailable_output();
  EXPECT_FALSE(is_well_formed(bad));
  EXPECT_TRUE(is_well_formed(sample()));
  size_t size = 7;
  EXPECT_EQ(replay_size(unavailable_output(), &size), NVRTC_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(size, 7u);
  char byte = 'x';
  EXPECT_EQ(replay_data(unavailable_output(), &byte), NVRTC_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(byte, 'x');
}

// NVRTC 13.5's NVRTC_ERROR_BUSY (18) is a known code; 19 is not.
TEST(CompileEntry, KnowsTheReturnCodesUpToNvrtc13_5) {
  EXPECT_TRUE(is_known_nvrtc_result(kNvrtcErrorBusy));
  EXPECT_TRUE(is_known_nvrtc_result(NVRTC_ERROR_CANCELLED));
  EXPECT_FALSE(is_known_nvrtc_result(kNvrtcErrorBusy + 1));
  CompileEntry busy = sample();
  busy.pch_create_status = kNvrtcErrorBusy;
  EXPECT_TRUE(decode_entry(encode_entry(busy)));
}

// An entry cut right after its lowered-name count, that count and `tail` following.
std::string entry_with_name_count(std::uint64_t count, const std::string& tail) {
  const std::string whole = encode_entry(sample());
  const CompileEntry e = sample();
  std::size_t outputs = 0;
  for (const RecordedOutput* o : {&e.log, &e.ptx, &e.cubin, &e.ltoir, &e.optixir})
    outputs += 4 + 1 + 8 + 4 + 8 + o->bytes.size();
  ByteWriter w;
  w.raw(whole.substr(0, 4 + 4 + 4 + outputs));
  w.u64(count);
  w.raw(tail);
  util::append_checksum(w);
  return w.str();
}

TEST(CompileEntry, RejectsACountItsBytesCannotHoldWithoutAllocatingForIt) {
  const std::string tail(64 << 10, '\0');
  // Every count up to the bytes left passed the old one-byte-per-item bound; a lowered name takes
  // at least 22 bytes, so this one cannot be honest.
  const std::string crafted = entry_with_name_count(tail.size(), tail);
  std::optional<CompileEntry> decoded;
  const std::size_t largest = largest_allocation_during([&] { decoded = decode_entry(crafted); });
  EXPECT_FALSE(decoded);
  EXPECT_LT(largest, crafted.size()) << "allocated for a count the input cannot hold";
  EXPECT_FALSE(decode_entry(entry_with_name_count(~std::uint64_t{0}, tail)));
}

TEST(ByteReader, CountIsBoundedByTheBytesEachItemNeeds) {
  ByteWriter w;
  w.u64(10);
  w.raw(std::string(30, 'x'));
  std::uint64_t n = 0;
  EXPECT_TRUE(util::ByteReader(w.str()).count(n, 3));
  EXPECT_EQ(n, 10u);
  EXPECT_FALSE(util::ByteReader(w.str()).count(n, 4));
  ByteWriter huge;
  huge.u64(~std::uint64_t{0});
  EXPECT_FALSE(util::ByteReader(huge.str()).count(n, 1));
}

TEST(Replay, DataNeverWritesMoreThanTheReportedSize) {
  RecordedOutput out{NVRTC_SUCCESS, true, 4, NVRTC_SUCCESS, "0123456789"};  // as if a bad entry got through
  size_t size = 0;
  ASSERT_EQ(replay_size(out, &size), NVRTC_SUCCESS);
  ASSERT_EQ(size, 4u);
  std::string buffer(size + 8, '#');
  EXPECT_EQ(replay_data(out, buffer.data()), NVRTC_SUCCESS);
  EXPECT_EQ(buffer, "0123########");
}

}  // namespace
}  // namespace nvrtc_cache::core
