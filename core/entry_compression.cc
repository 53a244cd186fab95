#include "core/entry_compression.h"

#include <zstd.h>

#include "util/binary_io.h"

namespace nvrtc_cache::core {
namespace {

constexpr std::string_view kCompressedMagic = "NVRZ";

// The declared size expand_entry() accepts for `compressed_bytes` of zstd frame.
bool within_bounds(std::uint64_t declared, std::size_t compressed_bytes) {
  return declared <= kMaxExpandedEntryBytes && declared / kMaxCompressionRatio <= compressed_bytes;
}

}  // namespace

bool is_compressed_entry(std::string_view stored) { return stored.starts_with(kCompressedMagic); }

std::string compress_entry(std::string encoded, int level) {
  if (level <= 0 || encoded.size() > kMaxExpandedEntryBytes) return encoded;
  std::string frame(ZSTD_compressBound(encoded.size()), '\0');
  const std::size_t n = ZSTD_compress(frame.data(), frame.size(), encoded.data(), encoded.size(),
                                      level > kMaxCompressionLevel ? kMaxCompressionLevel : level);
  if (ZSTD_isError(n) || !within_bounds(encoded.size(), n)) return encoded;
  frame.resize(n);
  util::ByteWriter w;
  util::begin_frame(w, kCompressedMagic, kCompressedEntryVersion);
  w.u64(encoded.size());
  w.bytes(frame);
  util::append_checksum(w);
  if (w.str().size() >= encoded.size()) return encoded;  // saves nothing
  return std::move(w.str());
}

std::optional<std::string> expand_entry(std::string_view stored) {
  std::optional<util::ByteReader> r = util::open_frame(stored, kCompressedMagic, kCompressedEntryVersion);
  std::uint64_t declared = 0;
  std::string_view frame;
  if (!r || !r->u64(declared) || !r->bytes_view(frame) || !r->at_end()) return std::nullopt;
  // Untrusted: the size is checked against the caps and against zstd's own header before allocating.
  if (!within_bounds(declared, frame.size())) return std::nullopt;
  const unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (content != declared || ZSTD_findFrameCompressedSize(frame.data(), frame.size()) != frame.size()) {
    return std::nullopt;
  }
  std::string out(static_cast<std::size_t>(declared), '\0');
  const std::size_t n = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n) || n != declared) return std::nullopt;
  return out;
}

}  // namespace nvrtc_cache::core
