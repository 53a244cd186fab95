#include "store/lmdb/page_layout.h"

#include "util/binary_io.h"

namespace nvrtc_cache::store {
namespace {

constexpr std::uint32_t kMetaMagic = 0xBEEFC0DE;
constexpr std::size_t kMetaBytes = 4 + 4 + 8 + 8 + 2 * 48 + 8 + 8;
constexpr std::size_t kMetaPageSizeOffset = 24;  // mm_dbs[0].md_pad
constexpr std::size_t kMetaLastPageOffset = 24 + 2 * 48;
constexpr std::uint16_t kOverflowPageFlag = 0x04;  // P_OVERFLOW
constexpr std::size_t kPageFlagsOffset = 10;
constexpr std::size_t kOverflowPagesOffset = 12;

}  // namespace

bool id_list_sound(std::string_view value, std::uint64_t last_page) {
  if (value.size() < 8 || value.size() % 8 != 0) return false;
  const std::uint64_t count = util::load_le(value.data(), 8);
  if (count != value.size() / 8 - 1) return false;  // by division: count * 8 may wrap
  std::uint64_t previous = ~std::uint64_t{0};
  for (std::size_t at = 8; at < value.size(); at += 8) {
    const std::uint64_t page = util::load_le(value.data() + at, 8);
    if (page < 2 || page > last_page || page >= previous) return false;
    previous = page;
  }
  return true;
}

bool on_overflow_pages(std::uintptr_t value_address, std::uint64_t page_size) {
  return page_size != 0 && value_address >= kLmdbPageHeaderSize &&
         (value_address - kLmdbPageHeaderSize) % page_size == 0;
}

std::optional<std::uint64_t> overflow_pages(std::uint64_t value_size, std::uint64_t page_size) {
  std::uint64_t span = 0;
  if (page_size == 0 || __builtin_add_overflow(value_size, kLmdbPageHeaderSize - 1, &span)) return std::nullopt;
  return span / page_size + 1;
}

bool overflow_header_sound(std::string_view header, std::uint64_t value_size, std::uint64_t page_size) {
  if (header.size() < kLmdbPageHeaderSize) return false;
  const auto flags = static_cast<std::uint16_t>(util::load_le(header.data() + kPageFlagsOffset, 2));
  const auto pages = util::load_le(header.data() + kOverflowPagesOffset, 4);
  const std::optional<std::uint64_t> needed = overflow_pages(value_size, page_size);
  return (flags & kOverflowPageFlag) != 0 && needed && pages == *needed;
}

std::optional<LmdbMeta> parse_lmdb_meta(std::string_view page) {
  if (page.size() < kLmdbPageHeaderSize + kMetaBytes) return std::nullopt;
  const char* meta = page.data() + kLmdbPageHeaderSize;
  if (util::load_le(meta, 4) != kMetaMagic) return std::nullopt;
  LmdbMeta m;
  m.page_size = static_cast<std::uint32_t>(util::load_le(meta + kMetaPageSizeOffset, 4));
  m.last_page = util::load_le(meta + kMetaLastPageOffset, 8);
  m.txnid = util::load_le(meta + kMetaLastPageOffset + 8, 8);
  if (m.page_size < 512 || m.page_size > (1u << 16) || (m.page_size & (m.page_size - 1)) != 0) return std::nullopt;
  return m;
}

std::optional<std::uint64_t> data_file_bytes_needed(const LmdbMeta& meta) {
  std::uint64_t pages = 0, bytes = 0;
  if (__builtin_add_overflow(meta.last_page, 1, &pages) || __builtin_mul_overflow(pages, meta.page_size, &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

}  // namespace nvrtc_cache::store
