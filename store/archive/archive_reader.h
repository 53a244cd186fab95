// ArchiveReader: reads an export archive (store/archive/archive_format.h) record by record through
// a streaming zstd decompressor, treating every byte as hostile: each length is checked against
// the limits before anything is allocated or copied (a record over the limit is discarded in small
// pieces, never held), a damaged record is skipped with its reason, and an archive that ends
// early, does not add up or carries bytes after its trailer is reported, never trusted as whole.
// Memory stays constant: one record (at most the value limit) and zstd's window (capped).
// Contract: single-threaded; never throws except std::bad_alloc; reads only through `source`.
// Trust: with a secret, a record whose MAC does not verify under it (or that has none) is skipped
// (kMac), and an archive whose header says it is unsigned is refused before its first record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "store/archive/archive_format.h"
#include "store/remote/secret.h"

namespace nvrtc_cache::store::archive {

// Reads up to `size` bytes into `buffer`: the count read, 0 at the end, negative on an error.
using ArchiveSource = std::function<std::ptrdiff_t(char* buffer, std::size_t size)>;

// A source over bytes in memory, handing out at most `piece` bytes per read (tests and fuzzers read
// in small pieces to reach every boundary). `bytes` must outlive the source.
ArchiveSource memory_source(std::string_view bytes, std::size_t piece);

class ArchiveReader {
 public:
  ArchiveReader(ArchiveSource source, const remote::Secret* secret,
                std::uint64_t max_value_bytes = kDefaultMaxValueBytes);
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  enum class Step {
    kRecord,   // *record holds a verified record
    kSkipped,  // one damaged or refused record was skipped; *reason says why
    kEnd,      // the trailer verified: every record has been seen (complete() is true)
    kFailed,   // the archive cannot be read further (problem() says why); what came before stands
  };
  Step next(ArchiveRecord* record, SkipReason* reason);

  bool complete() const { return complete_; }
  const std::string& problem() const { return problem_; }
  bool signed_archive() const { return signed_; }
  std::uint64_t compressed_bytes() const { return compressed_; }
  std::uint64_t uncompressed_bytes() const { return uncompressed_; }

 private:
  struct Zstd;
  Step fail(std::string problem);
  bool fill();
  bool read(char* out, std::size_t size);
  bool discard(std::uint64_t size);
  bool read_header();
  bool at_clean_end();
  Step read_trailer(std::uint32_t body_size);
  Step read_record(std::uint32_t body_size, ArchiveRecord* record, SkipReason* reason);

  ArchiveSource source_;
  const remote::Secret* secret_;
  std::uint64_t max_value_bytes_;
  std::unique_ptr<Zstd> zstd_;
  std::uint64_t frames_ = 0;
  std::uint64_t compressed_ = 0, uncompressed_ = 0;
  bool header_read_ = false, signed_ = false, complete_ = false, failed_ = false;
  std::string problem_;
};

}  // namespace nvrtc_cache::store::archive
