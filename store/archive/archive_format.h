// The export archive (`nvrtc-cache export` / `import`): one file holding cache entries, to copy a
// cache between machines, images and tiers. This header fixes the layout both ends share.
//
// The file is one zstd frame (with zstd's own content checksum). Decompressed, it is (integers
// little-endian):
//   header   "NVRCARCH" (8) | format version u32 | flags u32 (bit 0: every record is signed) |
//            XXH3-64 of the 16 bytes before it (8)
//   frames   type u8 | body length u32 | body | XXH3-64 of type, length and body (8)
//            type 1, a record:  kind u8 ('M' manifest, 'R' result) | created s64 | last used s64
//                               (Unix seconds, 0 unknown) | bytes(program name) | bytes(key) |
//                               bytes(sealed value: store/remote/sealed_value.h, the local store's
//                               payload, its key echoed, XXH3, and the keyed MAC when signed)
//                               where bytes(x) is a u64 length and x (util/binary_io.h)
//            type 2, the trailer (last): record count u64 | XXH3-64 of every decompressed byte
//                               before this frame's body (header, records, the trailer's type and
//                               length)
// A damaged record (its checksum, its seal or its MAC fails) is skipped alone; a missing trailer,
// a count or stream checksum that does not match, or bytes after the trailer mean the archive was
// truncated or altered: the records read before still count, and the reader says so.
// Contract: constants, plain types, and the frame prefix and checksum both ends compute (pure
// functions).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nvrtc_cache::store::archive {

inline constexpr std::string_view kArchiveMagic = "NVRCARCH";
inline constexpr std::uint32_t kArchiveVersion = 1;
inline constexpr std::uint32_t kArchiveSigned = 1;  // header flag
inline constexpr std::size_t kArchiveHeaderSize = 24;
inline constexpr std::size_t kFramePrefixSize = 5;  // type, body length
inline constexpr std::size_t kFrameChecksumSize = 8;

inline constexpr std::uint8_t kFrameRecord = 1;
inline constexpr std::uint8_t kFrameTrailer = 2;
inline constexpr std::size_t kTrailerBodySize = 16;

// A frame's prefix: its type and its body's length.
std::array<char, kFramePrefixSize> frame_prefix(std::uint8_t type, std::uint32_t body_size);
// The XXH3-64 that closes a frame: over its prefix and its body.
std::uint64_t frame_checksum(std::uint8_t type, std::string_view body);

// Limits a reader enforces before it allocates or copies anything a length claims.
inline constexpr std::size_t kMaxProgramName = 4096;
inline constexpr std::size_t kMaxArchiveKey = 1024;
// A record body over this is skipped (read and discarded in small pieces, never allocated).
inline constexpr std::uint64_t kDefaultMaxValueBytes = 256ull << 20;

// A compile's result, a handle-based library's (an nvJitLink link, a libNVVM compile), a manifest naming one,
// or a C API entry (a caller's value under a caller's key: api/api_entry.h).
enum class RecordKind : std::uint8_t { kManifest = 'M', kResult = 'R', kHandleResult = 'L', kApiEntry = 'A' };

// One cache entry as the archive carries it. `payload` is the local store's value (what
// Store::get returns for `key`), never sealed here.
struct ArchiveRecord {
  RecordKind kind = RecordKind::kResult;
  std::string key;
  std::string payload;
  std::string program_name;  // a result's program (a manifest: that of a result it names), may be ""
  std::int64_t created = 0;
  std::int64_t last_used = 0;
};

// Why a record was skipped on reading.
enum class SkipReason : std::uint8_t {
  kChecksum,   // the frame's checksum, or the sealed value's, does not hold
  kMac,        // a secret is set and the record is unsigned or signed with another key
  kSize,       // longer than the reader's limit
  kMalformed,  // sound checksum, but fields that do not parse (bad kind, key echo, lengths)
  kCount
};
inline constexpr std::string_view kSkipReasonNames[] = {"checksum", "mac", "size", "malformed"};

}  // namespace nvrtc_cache::store::archive
