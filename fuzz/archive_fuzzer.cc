// ArchiveReader on hostile bytes (an archive given to `nvrtc-cache import`). The first input byte
// picks: bit 0, the rest is the archive's decompressed content, compressed here so that the framing
// behind zstd is reached (else the rest is the file as is); bit 1, a secret is configured; bits 2-7,
// the size of the pieces the source hands over (1..64 bytes, or 64 KiB for 0). Every record read
// must be well-formed (a store key of its kind, a payload within the limit), the reader must stop,
// and the records read must survive a write and a read back unchanged.
#include <zstd.h>

#include <vector>

#include "fuzz/fuzz_support.h"
#include "store/archive/archive_reader.h"
#include "store/archive/archive_writer.h"

namespace {

using namespace nvrtc_cache::store::archive;

constexpr std::uint64_t kLimit = 1u << 20;

std::vector<ArchiveRecord> read_all(std::string_view bytes, std::size_t piece,
                                    const nvrtc_cache::store::remote::Secret* secret, bool* complete) {
  ArchiveReader reader(memory_source(bytes, piece), secret, kLimit);
  std::vector<ArchiveRecord> records;
  for (int steps = 0;; ++steps) {
    NVRTC_CACHE_FUZZ_CHECK(steps <= 1 << 20);
    ArchiveRecord record;
    SkipReason reason{};
    const ArchiveReader::Step step = reader.next(&record, &reason);
    if (step == ArchiveReader::Step::kEnd || step == ArchiveReader::Step::kFailed) break;
    if (step == ArchiveReader::Step::kSkipped) {
      NVRTC_CACHE_FUZZ_CHECK(reason < SkipReason::kCount);
      continue;
    }
    NVRTC_CACHE_FUZZ_CHECK(record.key.size() == 33 && record.key[0] == static_cast<char>(record.kind));
    NVRTC_CACHE_FUZZ_CHECK(record.payload.size() <= kLimit && record.program_name.size() <= kMaxProgramName);
    records.push_back(std::move(record));
  }
  *complete = reader.complete();
  NVRTC_CACHE_FUZZ_CHECK(reader.next(nullptr, nullptr) != ArchiveReader::Step::kRecord);
  return records;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const nvrtc_cache::store::remote::Secret kSecret =
      nvrtc_cache::store::remote::secret_from_bytes("fuzzing secret");
  const nvrtc_cache::store::remote::Secret* secret = (data[0] & 2) != 0 ? &kSecret : nullptr;
  const std::size_t piece = (data[0] >> 2) == 0 ? 65536 : (data[0] >> 2);
  std::string archive(nvrtc_cache::fuzz::as_view(data + 1, size - 1));
  if ((data[0] & 1) != 0) {
    std::string compressed(ZSTD_compressBound(archive.size()), '\0');
    const std::size_t n = ZSTD_compress(compressed.data(), compressed.size(), archive.data(), archive.size(), 1);
    if (ZSTD_isError(n)) return 0;
    compressed.resize(n);
    archive = std::move(compressed);
  }
  bool complete = false;
  const std::vector<ArchiveRecord> records = read_all(archive, piece, secret, &complete);

  std::string rewritten;
  ArchiveWriter writer([&](std::string_view bytes) { return rewritten.append(bytes), true; }, secret, 1);
  for (const ArchiveRecord& r : records) NVRTC_CACHE_FUZZ_CHECK(writer.add(r));
  NVRTC_CACHE_FUZZ_CHECK(writer.finish());
  bool again_complete = false;
  const std::vector<ArchiveRecord> again = read_all(rewritten, 65536, secret, &again_complete);
  NVRTC_CACHE_FUZZ_CHECK(again_complete && again.size() == records.size());
  for (std::size_t i = 0; i < again.size(); ++i) {
    NVRTC_CACHE_FUZZ_CHECK(again[i].key == records[i].key && again[i].payload == records[i].payload &&
                           again[i].kind == records[i].kind && again[i].program_name == records[i].program_name &&
                           again[i].created == records[i].created && again[i].last_used == records[i].last_used);
  }
  return 0;
}
