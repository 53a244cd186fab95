// The export archive's writer and reader (store/archive/), in-process with real zstd: round trips,
// every truncation, flipped bytes before and behind the compression, crafted lengths and counts,
// trailing data, and signing. Whatever the damage, every record the reader returns is one that was
// written, byte for byte, and a damaged archive is never reported complete.
#include <gtest/gtest.h>
#include <xxhash.h>
#include <zstd.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "store/archive/archive_reader.h"
#include "store/archive/archive_writer.h"
#include "tests/support/allocation_tracking.h"
#include "util/binary_io.h"

namespace nvrtc_cache {
namespace {

using namespace store::archive;
using store::remote::Secret;
using store::remote::secret_from_bytes;

std::vector<ArchiveRecord> sample_records(int n) {
  std::mt19937 random(7);
  std::vector<ArchiveRecord> records;
  for (int i = 0; i < n; ++i) {
    ArchiveRecord r;
    r.kind = i % 3 == 0 ? RecordKind::kManifest : RecordKind::kResult;
    r.key = std::string(1, static_cast<char>(r.kind)) + std::string(32, static_cast<char>('a' + i % 26));
    r.key[1] = static_cast<char>(i);
    const std::size_t size = 1 + random() % 3000;
    for (std::size_t b = 0; b < size; ++b) r.payload.push_back(static_cast<char>(b % 7 == 0 ? random() : 'x'));
    r.program_name = "kernel_" + std::to_string(i) + ".cu";
    r.created = 1'700'000'000 + i;
    r.last_used = 1'700'000'500 + i;
    records.push_back(std::move(r));
  }
  return records;
}

std::string write_archive(const std::vector<ArchiveRecord>& records, const Secret* secret) {
  std::string out;
  ArchiveWriter writer([&](std::string_view b) { return out.append(b), true; }, secret);
  for (const auto& r : records) EXPECT_TRUE(writer.add(r));
  EXPECT_TRUE(writer.finish());
  EXPECT_EQ(writer.compressed_bytes(), out.size());
  return out;
}

struct ReadBack {
  std::vector<ArchiveRecord> records;
  std::map<SkipReason, int> skipped;
  bool complete = false;
  std::string problem;
};

ReadBack read_archive(std::string_view bytes, const Secret* secret, std::size_t piece = 1 << 16,
                      std::uint64_t limit = kDefaultMaxValueBytes) {
  ArchiveReader reader(memory_source(bytes, piece), secret, limit);
  ReadBack out;
  for (;;) {
    ArchiveRecord r;
    SkipReason reason{};
    const auto step = reader.next(&r, &reason);
    if (step == ArchiveReader::Step::kRecord)
      out.records.push_back(std::move(r));
    else if (step == ArchiveReader::Step::kSkipped)
      ++out.skipped[reason];
    else
      break;
  }
  out.complete = reader.complete();
  out.problem = reader.problem();
  return out;
}

bool same(const ArchiveRecord& a, const ArchiveRecord& b) {
  return a.kind == b.kind && a.key == b.key && a.payload == b.payload && a.program_name == b.program_name &&
         a.created == b.created && a.last_used == b.last_used;
}

// Every record read is one written (same key, same everything).
void expect_all_genuine(const ReadBack& got, const std::vector<ArchiveRecord>& written) {
  for (const auto& r : got.records) {
    bool found = false;
    for (const auto& w : written) found = found || same(r, w);
    EXPECT_TRUE(found) << "a record that was never written came back";
  }
}

std::string decompress(const std::string& archive) {
  std::string plain(8u << 20, '\0');
  const std::size_t n = ZSTD_decompress(plain.data(), plain.size(), archive.data(), archive.size());
  EXPECT_FALSE(ZSTD_isError(n));
  plain.resize(n);
  return plain;
}

std::string compress(const std::string& plain) {
  std::string out(ZSTD_compressBound(plain.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), plain.data(), plain.size(), 1);
  out.resize(n);
  return out;
}

// A frame as the format lays it out (type, length, body, XXH3 of the three).
std::string frame(std::uint8_t type, std::uint32_t length, std::string_view body) {
  util::ByteWriter w;
  w.u8(type);
  w.u32(length);
  w.raw(body);
  w.u64(XXH3_64bits(w.str().data(), w.str().size()));
  return std::move(w.str());
}

// A trailer for the plain stream `before` claiming `count` records, with sound checksums.
std::string trailer(const std::string& before, std::uint64_t count) {
  util::ByteWriter prefix;
  prefix.u8(kFrameTrailer);
  prefix.u32(kTrailerBodySize);
  const std::string hashed = before + prefix.str();
  util::ByteWriter body;
  body.u64(count);
  body.u64(XXH3_64bits(hashed.data(), hashed.size()));
  return frame(kFrameTrailer, kTrailerBodySize, body.str());
}

TEST(Archive, RoundTripsUnsignedAndSignedInAnyPieceSize) {
  const auto records = sample_records(40);
  const Secret secret = secret_from_bytes("archive secret");
  for (const Secret* s : {static_cast<const Secret*>(nullptr), &secret}) {
    const std::string archive = write_archive(records, s);
    for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{1} << 16}) {
      const ReadBack got = read_archive(archive, s, piece);
      EXPECT_TRUE(got.complete) << got.problem;
      EXPECT_TRUE(got.skipped.empty());
      ASSERT_EQ(got.records.size(), records.size());
      for (std::size_t i = 0; i < records.size(); ++i) EXPECT_TRUE(same(got.records[i], records[i]));
    }
  }
  const ReadBack empty = read_archive(write_archive({}, nullptr), nullptr);
  EXPECT_TRUE(empty.complete) << empty.problem;
  EXPECT_TRUE(empty.records.empty());
}

TEST(Archive, EveryTruncationIsReportedAndReturnsOnlyGenuineRecords) {
  const auto records = sample_records(12);
  const std::string archive = write_archive(records, nullptr);
  for (std::size_t cut = 0; cut < archive.size(); ++cut) {
    const ReadBack got = read_archive(std::string_view(archive).substr(0, cut), nullptr, 997);
    ASSERT_FALSE(got.complete) << "cut at " << cut;
    EXPECT_FALSE(got.problem.empty());
    ASSERT_LE(got.records.size(), records.size());
    for (std::size_t i = 0; i < got.records.size(); ++i) ASSERT_TRUE(same(got.records[i], records[i])) << cut;
  }
  // The plain stream cut at every offset, recompressed (a writer that died mid-archive).
  const std::string plain = decompress(archive);
  for (std::size_t cut = 0; cut < plain.size(); cut += 13) {
    const ReadBack got = read_archive(compress(plain.substr(0, cut)), nullptr);
    ASSERT_FALSE(got.complete) << "plain cut at " << cut;
    for (std::size_t i = 0; i < got.records.size(); ++i) ASSERT_TRUE(same(got.records[i], records[i])) << cut;
  }
}

TEST(Archive, FlippedBytesAreCaughtByZstdOrByTheRecordChecksums) {
  const auto records = sample_records(12);
  const std::string archive = write_archive(records, nullptr);
  int failed = 0;
  for (std::size_t at = 0; at < archive.size(); ++at) {
    std::string damaged = archive;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    const ReadBack got = read_archive(damaged, nullptr);
    expect_all_genuine(got, records);
    if (got.complete) {
      // Only a flip zstd and every checksum agree changes nothing can leave the archive whole.
      ASSERT_EQ(got.records.size(), records.size()) << at;
    } else {
      ++failed;
    }
  }
  EXPECT_GT(failed, static_cast<int>(archive.size()) * 9 / 10);

  // Behind the compression: one flipped byte in a record skips that record alone, and the stream
  // checksum then reports the archive altered.
  const std::string plain = decompress(archive);
  std::size_t flips = 0;
  for (std::size_t at = kArchiveHeaderSize + 40; at + 40 < plain.size(); at += 211) {
    std::string damaged = plain;
    damaged[at] = static_cast<char>(damaged[at] ^ 1);
    ReadBack got = read_archive(compress(damaged), nullptr);
    expect_all_genuine(got, records);
    EXPECT_FALSE(got.complete) << at;
    if (got.skipped[SkipReason::kChecksum] == 1) {
      EXPECT_EQ(got.records.size(), records.size() - 1) << "the other records are kept";
      ++flips;
    }
  }
  EXPECT_GT(flips, 10u);
}

TEST(Archive, CraftedLengthsAndCountsNeverAllocateWhatTheyClaim) {
  const auto records = sample_records(3);
  const std::string plain = decompress(write_archive(records, nullptr));
  const std::string header = plain.substr(0, kArchiveHeaderSize);
  // A record claiming 4 GiB with nothing behind it: truncated, and nothing near that allocated.
  // Also one under the limit (200 MiB): the body grows only with the bytes actually present.
  for (std::uint32_t claimed : {0xfffffff0u, 200u << 20}) {
    const std::string huge = header + frame(kFrameRecord, claimed, std::string(1000, 'h'));
    ReadBack got;
    const std::size_t largest =
        testing::largest_allocation_during([&] { got = read_archive(compress(huge), nullptr); });
    EXPECT_FALSE(got.complete);
    EXPECT_TRUE(got.records.empty());
    EXPECT_LT(largest, 16u << 20) << claimed;
  }
  // Over the reader's limit but present: skipped (size), the records after it are read.
  {
    const ReadBack all = read_archive(compress(plain), nullptr);
    ASSERT_EQ(all.records.size(), 3u);
  }
  const std::string big_body(20000, 'B');
  std::string with_big =
      header + frame(kFrameRecord, static_cast<std::uint32_t>(big_body.size()), big_body) +
      plain.substr(kArchiveHeaderSize,
                   plain.size() - kArchiveHeaderSize - (kFramePrefixSize + kTrailerBodySize + kFrameChecksumSize));
  with_big += trailer(with_big, 4);
  const ReadBack limited = read_archive(compress(with_big), nullptr, 1 << 16, /*limit=*/100);
  EXPECT_EQ(limited.skipped.at(SkipReason::kSize),
            1 + static_cast<int>(std::count_if(records.begin(), records.end(),
                                               [](const auto& r) { return r.payload.size() > 100; })));
  EXPECT_TRUE(limited.complete) << limited.problem;
  const ReadBack unlimited = read_archive(compress(with_big), nullptr);
  EXPECT_EQ(unlimited.skipped.at(SkipReason::kMalformed), 1);
  EXPECT_EQ(unlimited.records.size(), 3u);
  EXPECT_TRUE(unlimited.complete) << unlimited.problem;

  // A trailer counting one record more (or less) than there are, with every checksum sound.
  const std::string body = plain.substr(0, plain.size() - (kFramePrefixSize + kTrailerBodySize + kFrameChecksumSize));
  for (std::uint64_t count : {std::uint64_t{2}, std::uint64_t{4}, ~std::uint64_t{0}}) {
    const ReadBack counted = read_archive(compress(body + trailer(body, count)), nullptr);
    EXPECT_FALSE(counted.complete);
    EXPECT_NE(counted.problem.find("counts"), std::string::npos) << counted.problem;
    EXPECT_EQ(counted.records.size(), 3u);
  }
  EXPECT_TRUE(read_archive(compress(body + trailer(body, 3)), nullptr).complete);
  // Bytes after the trailer, inside the frame and as a second frame.
  EXPECT_FALSE(read_archive(compress(plain + "x"), nullptr).complete);
  EXPECT_FALSE(read_archive(compress(plain) + compress("more"), nullptr).complete);
  // An unknown frame type, a wrong magic, a newer version.
  EXPECT_FALSE(read_archive(compress(header + frame(9, 0, "")), nullptr).complete);
  std::string wrong_magic = plain;
  wrong_magic[0] = 'X';
  EXPECT_NE(read_archive(compress(wrong_magic), nullptr).problem.find("not an nvrtc-cache archive"), std::string::npos);
  EXPECT_FALSE(read_archive("definitely not zstd", nullptr).complete);
}

TEST(Archive, ASecretRefusesUnsignedArchivesAndSkipsForeignSignatures) {
  const auto records = sample_records(5);
  const Secret secret = secret_from_bytes("ours");
  const Secret other = secret_from_bytes("theirs");
  const ReadBack unsigned_with_secret = read_archive(write_archive(records, nullptr), &secret);
  EXPECT_TRUE(unsigned_with_secret.records.empty());
  EXPECT_FALSE(unsigned_with_secret.complete);
  EXPECT_NE(unsigned_with_secret.problem.find("not signed"), std::string::npos) << unsigned_with_secret.problem;

  const ReadBack foreign = read_archive(write_archive(records, &other), &secret);
  EXPECT_TRUE(foreign.records.empty());
  EXPECT_EQ(foreign.skipped.at(SkipReason::kMac), 5);
  EXPECT_TRUE(foreign.complete);

  // A signed archive reads without a secret (checksums only), like a shared tier's values.
  EXPECT_EQ(read_archive(write_archive(records, &secret), nullptr).records.size(), 5u);
}

}  // namespace
}  // namespace nvrtc_cache
