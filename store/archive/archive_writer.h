// ArchiveWriter: writes an export archive (store/archive/archive_format.h) record by record through
// a streaming zstd compressor; memory stays constant (one record and zstd's window), whatever the
// archive's size.
// Contract: single-threaded; never throws except std::bad_alloc; every byte leaves through `sink`
// (which returns false on a write error, after which add() and finish() return false). An archive
// is complete only after finish(): one abandoned before has no trailer and a reader reports it
// truncated. With a secret every record is signed (store/remote/sealed_value.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "store/archive/archive_format.h"
#include "store/remote/secret.h"

namespace nvrtc_cache::store::archive {

using ArchiveSink = std::function<bool(std::string_view bytes)>;

class ArchiveWriter {
 public:
  // `level`: zstd's compression level (1..19; 3 is zstd's default).
  ArchiveWriter(ArchiveSink sink, const remote::Secret* secret, int level = 3);
  ~ArchiveWriter();
  ArchiveWriter(const ArchiveWriter&) = delete;
  ArchiveWriter& operator=(const ArchiveWriter&) = delete;

  bool add(const ArchiveRecord& record);
  bool finish();

  std::uint64_t records() const { return records_; }
  std::uint64_t uncompressed_bytes() const { return uncompressed_; }
  std::uint64_t compressed_bytes() const { return compressed_; }
  // Set when a call returned false: what failed.
  const std::string& problem() const { return problem_; }

 private:
  struct Zstd;
  bool write_header();
  bool write(std::string_view bytes);
  bool frame(std::uint8_t type, std::string_view body);
  bool pump(bool end);

  ArchiveSink sink_;
  const remote::Secret* secret_;
  std::unique_ptr<Zstd> zstd_;
  std::string pending_;  // decompressed bytes not yet given to zstd
  std::uint64_t records_ = 0, uncompressed_ = 0, compressed_ = 0;
  bool header_written_ = false, finished_ = false, failed_ = false;
  std::string problem_;
};

}  // namespace nvrtc_cache::store::archive
