// The small records the LMDB store reads back, as pure codecs and checks on bytes: its own (the
// per-entry access record, the 8-byte counters and totals) and the parts of LMDB 0.9's on-disk
// layout it checks before trusting LMDB with them (the meta page, free-list ID lists, the header of
// a value stored on overflow pages).
// Contract: every input is untrusted (another process, a damaged disk or a hostile writer may have
// put anything there): decoders return nullopt/false for anything not exactly well-formed, never
// read outside the bytes given, and do all size arithmetic checked. Pure, no I/O, thread-safe,
// never throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nvrtc_cache::store {

// ---- Little-endian u64 values: counters ("counters") and totals ("meta") ----
inline constexpr std::size_t kCounterRecordSize = 8;
void store_le64(char* out, std::uint64_t value);
// nullopt unless `bytes` is exactly 8 bytes.
std::optional<std::uint64_t> decode_le64(std::string_view bytes);

// ---- The per-entry access record ("access", under the entry's key) ----
struct AccessRecord {
  std::uint64_t payload_size = 0;
  std::int64_t created = 0;
  std::int64_t last_access = 0;
  bool operator==(const AccessRecord&) const = default;
};
inline constexpr std::size_t kAccessRecordSize = 24;
void encode_access(const AccessRecord& record, char* out);  // writes kAccessRecordSize bytes
std::optional<AccessRecord> decode_access(std::string_view bytes);

// ---- LMDB's layouts ----
// LMDB's page header, in front of every page (and of a value stored on overflow pages).
inline constexpr std::size_t kLmdbPageHeaderSize = 16;

// A free-list record: a count, then that many strictly descending page numbers, each a data page
// of the file (>= 2, <= last_page).
bool id_list_sound(std::string_view value, std::uint64_t last_page);

// The contiguous pages LMDB gives a value of `value_size` bytes stored outside its leaf page
// (OVPAGES in mdb.c); nullopt if the arithmetic would overflow or page_size is 0.
std::optional<std::uint64_t> overflow_pages(std::uint64_t value_size, std::uint64_t page_size);
// The page header in front of an overflow value: flagged P_OVERFLOW and spanning exactly the pages
// its size needs.
bool overflow_header_sound(std::string_view header, std::uint64_t value_size, std::uint64_t page_size);

// LMDB's meta page (lmdb.h 0.9, 64-bit): a 16-byte page header, then MDB_meta: magic u32, version
// u32, address, mapsize, two MDB_db of 48 bytes (the first's md_pad holds the page size), last_pg,
// txnid.
struct LmdbMeta {
  std::uint32_t page_size = 0;  // a power of two in [512, 65536]
  std::uint64_t last_page = 0;
  std::uint64_t txnid = 0;
};
std::optional<LmdbMeta> parse_lmdb_meta(std::string_view page);
// The bytes a data file needs for the pages `meta` says are in use; nullopt on overflow.
std::optional<std::uint64_t> data_file_bytes_needed(const LmdbMeta& meta);

}  // namespace nvrtc_cache::store
