// Entry compression: an encoded CompileEntry (core/compile_entry.h) as the store keeps it, compressed
// with zstd when the `compression` setting asks for it and it saves space. decode_entry() takes both
// forms, so entries written uncompressed (by older versions, or with compression off) still decode.
//
// Layout of a compressed entry (a util/binary_io.h frame, little-endian):
//   magic "NVRZ", u32 version (kCompressedEntryVersion), u64 decompressed size n, bytes(one zstd frame
//   whose content size is n), XXH3-64 of everything before it.
// The decompressed bytes are an encoded entry with its own magic, version and checksum.
//
// Contract: pure functions (no I/O, no global state), thread-safe, never throw on bad input (only
// std::bad_alloc from compress_entry). The bytes expanded are untrusted: expand_entry() returns nullopt
// for a damaged or malformed frame, and before allocating checks the declared size against
// kMaxExpandedEntryBytes and against kMaxCompressionRatio times the compressed size (compress_entry()
// never writes a frame beyond either, so no entry it wrote is refused); what zstd produces must be
// exactly the declared size. The same code and zstd serve the Windows port (zstd built from Debian's
// source package there), so an entry written on one system is read on the other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nvrtc_cache::core {

inline constexpr std::uint32_t kCompressedEntryVersion = 1;
// The largest entry expanded: far above any NVRTC output seen (a CUB kernel's entry is ~0.2 MiB).
inline constexpr std::uint64_t kMaxExpandedEntryBytes = 256ull << 20;
// The most a compressed entry may expand (NVRTC's outputs compress 3-10x; a run of zeros far more).
inline constexpr std::uint64_t kMaxCompressionRatio = 64;
// zstd's levels the `compression` setting accepts (0: entries are stored uncompressed).
inline constexpr int kMaxCompressionLevel = 19;

// Whether `stored` is a compressed entry (by its magic; it may still be damaged).
bool is_compressed_entry(std::string_view stored);

// `encoded` compressed at zstd `level` (1..kMaxCompressionLevel), or `encoded` itself when `level` is 0,
// compression is unavailable, fails, saves nothing, or would exceed the bounds expand_entry() checks.
std::string compress_entry(std::string encoded, int level);

// The encoded entry inside a compressed one; nullopt when it is malformed, damaged or out of bounds.
std::optional<std::string> expand_entry(std::string_view stored);

}  // namespace nvrtc_cache::core
