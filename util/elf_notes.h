// Reading the GNU build-id from the notes of one PT_NOTE segment, whether the segment comes from a
// file (util/elf_identity.h: untrusted bytes) or from an object already loaded in this process
// (shim/interpose/library_identity.h), so both name a library by the same bytes.
// Contract: pure; thread-safe; never reads outside `notes`; never throws except std::bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nvrtc_cache::util {

// The longest build-id read (GNU ld writes 20 bytes; longer means a malformed note).
inline constexpr std::size_t kMaxBuildIdBytes = 1024;

// The first NT_GNU_BUILD_ID of a PT_NOTE segment's notes (its bytes, at most 2^32 of them, and its
// p_align: notes are 4-aligned, or 8-aligned in a segment aligned so): true and `build_id` set when
// found; false without `why` when there is none; false with `why` when the notes are malformed or the
// build-id is longer than `max_build_id` bytes.
bool find_gnu_build_id(std::string_view notes, std::uint64_t segment_align, std::size_t max_build_id,
                       std::string& build_id, std::string& why);

}  // namespace nvrtc_cache::util
