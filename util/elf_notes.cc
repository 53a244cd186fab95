#include "util/elf_notes.h"

#include <elf.h>

#include <cstring>

#include "util/binary_io.h"

namespace nvrtc_cache::util {

bool find_gnu_build_id(std::string_view notes, std::uint64_t segment_align, std::size_t max_build_id,
                       std::string& build_id, std::string& why) {
  constexpr std::uint64_t kNoteHeaderBytes = 12;  // sizeof(Elf64_Nhdr)
  // The name and the descriptor each start at the next aligned offset (as libelf and binutils read them).
  const std::uint64_t align = segment_align == 8 ? 8 : 4;
  const auto aligned = [align](std::uint64_t n) { return (n + align - 1) & ~(align - 1); };
  const std::uint64_t size = notes.size();  // at most 2^32: no sum below can overflow
  std::uint64_t at = 0;
  while (size - at >= kNoteHeaderBytes) {
    const char* header = notes.data() + at;
    const std::uint64_t name_size = load_le(header, 4);
    const std::uint64_t desc_size = load_le(header + 4, 4);
    const std::uint64_t type = load_le(header + 8, 4);
    const std::uint64_t name_at = at + kNoteHeaderBytes;
    const std::uint64_t desc_at = aligned(name_at + name_size);
    if (desc_at > size || desc_size > size - desc_at) {
      why = "a note overruns its segment";
      return false;
    }
    if (type == NT_GNU_BUILD_ID && name_size == 4 && std::memcmp(notes.data() + name_at, "GNU", 4) == 0) {
      if (desc_size > max_build_id) {
        why = "its build-id is implausibly long";
        return false;
      }
      build_id.assign(notes.data() + desc_at, static_cast<std::size_t>(desc_size));
      return true;
    }
    at = aligned(desc_at + desc_size);  // past the end when the last note's padding is cut off: ends the loop
    if (at > size) break;
  }
  return false;
}

}  // namespace nvrtc_cache::util
