// Compressed entries (core/entry_compression.h), in-process with real zstd: round trips through
// decode_entry, uncompressed entries still decoding, and hostile frames (a declared size beyond the
// caps, a size zstd's header contradicts, damage) refused without allocating for them.
#include "core/entry_compression.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include "core/compile_entry.h"
#include "tests/support/allocation_tracking.h"
#include "util/binary_io.h"

namespace nvrtc_cache::core {
namespace {

using testing::largest_allocation_during;

// `n` bytes of 16 symbols in a pseudo-random order: about 2x compressible, as machine code is.
std::string compressible(std::size_t n) {
  std::string bytes(n, '\0');
  std::uint32_t state = 12345;
  for (char& c : bytes) {
    state = state * 1664525u + 1013904223u;
    c = static_cast<char>((state >> 28) * 17);
  }
  return bytes;
}

// A well-formed entry with `n` bytes of compressible CUBIN.
CompileEntry entry_with_cubin(std::size_t n) {
  CompileEntry e;
  e.log = {0, true, 0, 0, ""};
  e.ptx = {0, true, 0, 0, ""};
  e.cubin = {0, true, n, 0, compressible(n)};
  e.ltoir = {0, true, 0, 0, ""};
  e.optixir = {0, true, 0, 0, ""};
  e.unknown_name = {"", 10, true, true, ""};
  return e;
}

// A compressed frame as a hostile writer makes it: any declared size, any zstd frame, a valid checksum.
std::string crafted_frame(std::uint64_t declared, std::string_view zstd_frame) {
  util::ByteWriter w;
  util::begin_frame(w, "NVRZ", kCompressedEntryVersion);
  w.u64(declared);
  w.bytes(zstd_frame);
  util::append_checksum(w);
  return std::move(w.str());
}

std::string zstd_of(std::string_view bytes) {
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 1));
  return out;
}

TEST(EntryCompression, CompressedEntriesDecodeToTheSameEntry) {
  const std::string plain = encode_entry(entry_with_cubin(100000));
  for (int level : {1, 3, 19}) {
    const std::string stored = compress_entry(plain, level);
    EXPECT_TRUE(is_compressed_entry(stored)) << level;
    EXPECT_LT(stored.size(), plain.size() * 3 / 4) << level;
    const std::optional<CompileEntry> back = decode_entry(stored);
    ASSERT_TRUE(back) << level;
    EXPECT_EQ(encode_entry(*back), plain);
  }
}

TEST(EntryCompression, UncompressedEntriesStillDecodeAndLevelZeroWritesThem) {
  const std::string plain = encode_entry(entry_with_cubin(4096));
  EXPECT_EQ(compress_entry(plain, 0), plain);  // compression off: the bytes older versions wrote
  EXPECT_FALSE(is_compressed_entry(plain));
  ASSERT_TRUE(decode_entry(plain));
  EXPECT_EQ(encode_entry(*decode_entry(plain)), plain);
}

TEST(EntryCompression, KeepsWhatCompressionWouldNotShrink) {
  std::string random(4096, '\0');
  std::uint64_t state = 88172645463325252ull;
  for (char& c : random) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    c = static_cast<char>(state >> 56);
  }
  EXPECT_EQ(compress_entry(random, 1), random);
  EXPECT_EQ(compress_entry("", 1), "");
  const std::string tiny = encode_entry(entry_with_cubin(8));
  EXPECT_LE(compress_entry(tiny, 19).size(), tiny.size());
}

TEST(EntryCompression, DamageAnywhereIsRefused) {
  const std::string stored = compress_entry(encode_entry(entry_with_cubin(3000)), 1);
  ASSERT_TRUE(is_compressed_entry(stored));
  for (std::size_t i = 0; i < stored.size(); ++i) {
    std::string damaged = stored;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x10);
    EXPECT_FALSE(decode_entry(damaged)) << i;
  }
  for (std::size_t n = 0; n < stored.size(); ++n) EXPECT_FALSE(decode_entry(stored.substr(0, n))) << n;
}

// A writer of the cache can recompute every checksum: the declared size is checked before allocating.
TEST(EntryCompression, RefusesADeclaredSizeBeyondTheCapsWithoutAllocatingIt) {
  const std::string zeros(kMaxExpandedEntryBytes / 1024, '\0');
  const std::string small = zstd_of(zeros);  // a real frame, far beyond the ratio bound
  EXPECT_FALSE(is_compressed_entry(compress_entry(std::string(zeros.size(), '\0'), 1)));  // never written
  for (std::uint64_t declared : {std::uint64_t{zeros.size()}, kMaxExpandedEntryBytes + 1, ~std::uint64_t{0}}) {
    const std::string crafted = crafted_frame(declared, small);
    std::optional<std::string> expanded;
    const std::size_t largest = largest_allocation_during([&] { expanded = expand_entry(crafted); });
    EXPECT_FALSE(expanded) << declared;
    EXPECT_LT(largest, 64u << 10) << declared;
  }
}

TEST(EntryCompression, RefusesASizeTheFrameContradicts) {
  const std::string plain = encode_entry(entry_with_cubin(5000));
  const std::string frame = zstd_of(plain);
  ASSERT_TRUE(decode_entry(crafted_frame(plain.size(), frame)));
  EXPECT_FALSE(expand_entry(crafted_frame(plain.size() - 1, frame)));
  EXPECT_FALSE(expand_entry(crafted_frame(plain.size() + 1, frame)));
  EXPECT_FALSE(expand_entry(crafted_frame(plain.size(), frame + "x")));         // bytes after the frame
  EXPECT_FALSE(expand_entry(crafted_frame(plain.size(), "not a zstd frame")));  // no frame at all
  // A frame that holds anything but an entry expands, and then is not an entry.
  const std::string text = compressible(5000);
  EXPECT_TRUE(expand_entry(crafted_frame(text.size(), zstd_of(text))));
  EXPECT_FALSE(decode_entry(crafted_frame(text.size(), zstd_of(text))));
}

}  // namespace
}  // namespace nvrtc_cache::core
