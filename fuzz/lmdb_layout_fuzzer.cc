// The checks on LMDB's own layouts that run before LMDB is trusted with a file: the meta page (and
// the data file size it implies), free-list ID lists, and overflow page headers.
#include "fuzz/fuzz_support.h"
#include "store/lmdb/page_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache;
  const std::string_view input = fuzz::as_view(data, size);
  if (const auto meta = store::parse_lmdb_meta(input)) {
    NVRTC_CACHE_FUZZ_CHECK(meta->page_size >= 512 && meta->page_size <= 65536);
    if (const auto needed = store::data_file_bytes_needed(*meta)) {
      NVRTC_CACHE_FUZZ_CHECK(*needed / meta->page_size == meta->last_page + 1);
    }
  }
  // The first 8 bytes as the last page number, the rest as a free-list record.
  util::ByteReader reader(input);
  std::uint64_t last_page = 0;
  if (reader.u64(last_page)) {
    const std::string_view ids = input.substr(8);
    if (store::id_list_sound(ids, last_page)) NVRTC_CACHE_FUZZ_CHECK(ids.size() % 8 == 0 && ids.size() >= 8);
  }
  // An overflow header, then the value size and page size it is checked against.
  if (input.size() >= store::kLmdbPageHeaderSize + 16) {
    util::ByteReader sizes(input.substr(store::kLmdbPageHeaderSize));
    std::uint64_t value_size = 0, page_size = 0;
    if (sizes.u64(value_size) && sizes.u64(page_size)) {
      const bool sound =
          store::overflow_header_sound(input.substr(0, store::kLmdbPageHeaderSize), value_size, page_size);
      if (sound) NVRTC_CACHE_FUZZ_CHECK(store::overflow_pages(value_size, page_size).has_value());
    }
  }
  return 0;
}
