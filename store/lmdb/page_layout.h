// Everything the cache knows of LMDB 0.9's on-disk layout (64-bit builds), as pure checks on bytes
// and addresses: the page header, the meta page, free-list ID lists, values stored on overflow
// pages, the reserved databases. Used by the structure check (store/lmdb/structure_check.h), map
// usage (store/lmdb/eviction.h) and the cache directory's data file check (store/cache_directory.h).
// In nvrtc_cache::store rather than ::lmdb: the cache directory and the fuzzers use it too.
// Contract: every input is untrusted: checks return nullopt/false for anything not exactly
// well-formed, never read outside the bytes given, and do all size arithmetic checked. Pure, no I/O
// (never dereferences an address), thread-safe, fork-safe, never throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nvrtc_cache::store {

// LMDB's page header, in front of every page (and of a value stored on overflow pages).
inline constexpr std::size_t kLmdbPageHeaderSize = 16;

// LMDB's reserved databases (FREE_DBI, MAIN_DBI in mdb.c: the free-page list and the names of the
// others) and its meta pages (NUM_METAS), which no database counts.
inline constexpr unsigned kFreeDbi = 0;
inline constexpr unsigned kMainDbi = 1;
inline constexpr std::uint64_t kMetaPages = 2;

// A free-list record: a count, then that many strictly descending page numbers, each a data page
// of the file (>= 2, <= last_page).
bool id_list_sound(std::string_view value, std::uint64_t last_page);

// Whether a value LMDB returned at `value_address` lies on overflow pages: such a value starts right
// after the page header of its first page (a value inside a leaf page never does: the page's own
// header and pointer array come first). Its header is then the kLmdbPageHeaderSize bytes before it.
bool on_overflow_pages(std::uintptr_t value_address, std::uint64_t page_size);

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
