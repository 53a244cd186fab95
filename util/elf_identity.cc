#include "util/elf_identity.h"

#include <elf.h>

#include <cstring>
#include <vector>

#include "util/binary_io.h"
#include "util/elf_notes.h"

namespace nvrtc_cache::util {
namespace {

using util::load_le;

constexpr std::size_t kHeaderBytes = 64;         // sizeof(Elf64_Ehdr)
constexpr std::size_t kProgramHeaderBytes = 56;  // sizeof(Elf64_Phdr)
constexpr std::size_t kDynamicEntryBytes = 16;   // sizeof(Elf64_Dyn)

struct Segment {
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t vaddr = 0;
  std::uint64_t filesz = 0;
  std::uint64_t align = 0;
};

// A PT_NOTE or PT_DYNAMIC segment's bytes, or nullopt with `why`.
std::optional<std::string> segment_bytes(const Segment& s, std::uint64_t file_size, const ElfReadAt& read,
                                         const char* what, std::string& why) {
  if (!util::range_inside(s.offset, s.filesz, file_size)) {
    why = std::string("its ") + what + " segment lies outside the file";
    return std::nullopt;
  }
  if (s.filesz > kMaxElfSegmentBytes) {
    why = std::string("its ") + what + " segment is implausibly large";
    return std::nullopt;
  }
  std::string bytes(static_cast<std::size_t>(s.filesz), '\0');
  if (!bytes.empty() && !read(s.offset, bytes.size(), bytes.data())) {
    why = std::string("cannot read its ") + what + " segment";
    return std::nullopt;
  }
  return bytes;
}

// The file offset of virtual address `vaddr`, through the PT_LOAD segment whose file bytes hold it.
std::optional<std::uint64_t> file_offset_of(std::uint64_t vaddr, const std::vector<Segment>& segments) {
  for (const Segment& s : segments) {
    if (s.type != PT_LOAD || vaddr < s.vaddr || vaddr - s.vaddr >= s.filesz) continue;
    return s.offset + (vaddr - s.vaddr);  // < offset + filesz: checked against the file by the caller
  }
  return std::nullopt;
}

// DT_SONAME of a PT_DYNAMIC segment's entries: true with `soname` (or nullopt when it has none);
// false with `why` when malformed.
bool find_soname(std::string_view dynamic, const std::vector<Segment>& segments, std::uint64_t file_size,
                 const ElfReadAt& read, std::optional<std::string>& soname, std::string& why) {
  std::optional<std::uint64_t> strtab, strsz, name;
  for (std::size_t at = 0; dynamic.size() - at >= kDynamicEntryBytes; at += kDynamicEntryBytes) {
    const std::uint64_t tag = load_le(dynamic.data() + at, 8);
    const std::uint64_t value = load_le(dynamic.data() + at + 8, 8);
    if (tag == DT_NULL) break;
    if (tag == DT_STRTAB && !strtab) strtab = value;
    if (tag == DT_STRSZ && !strsz) strsz = value;
    if (tag == DT_SONAME && !name) name = value;
  }
  if (!name) return true;
  if (!strtab || !strsz) {
    why = "it has a SONAME but no string table";
    return false;
  }
  if (*name >= *strsz) {
    why = "its SONAME lies outside its string table";
    return false;
  }
  const std::optional<std::uint64_t> table = file_offset_of(*strtab, segments);
  if (!table || *table > file_size || *name > file_size - *table) {
    why = "its string table lies outside the file";
    return false;
  }
  const std::uint64_t start = *table + *name;
  std::uint64_t length = std::min<std::uint64_t>(*strsz - *name, file_size - start);
  length = std::min<std::uint64_t>(length, kMaxElfSonameBytes + 1);
  std::string bytes(static_cast<std::size_t>(length), '\0');
  if (!bytes.empty() && !read(start, bytes.size(), bytes.data())) {
    why = "cannot read its SONAME";
    return false;
  }
  const std::size_t end = bytes.find('\0');
  if (end == std::string::npos) {
    why = "its SONAME is not terminated within its limits";
    return false;
  }
  bytes.resize(end);
  soname = std::move(bytes);
  return true;
}

}  // namespace

std::optional<ElfIdentity> read_elf_identity(std::uint64_t file_size, const ElfReadAt& read, std::string& why) {
  why.clear();
  char header[kHeaderBytes];
  if (file_size < kHeaderBytes || !read(0, kHeaderBytes, header) || std::memcmp(header, ELFMAG, SELFMAG) != 0) {
    why = "it is not an ELF file";
    return std::nullopt;
  }
  if (header[EI_CLASS] != ELFCLASS64 || header[EI_DATA] != ELFDATA2LSB || header[EI_VERSION] != EV_CURRENT) {
    why = "it is not a 64-bit little-endian ELF file";
    return std::nullopt;
  }
  ElfIdentity id;
  id.type = static_cast<std::uint16_t>(load_le(header + 16, 2));
  id.machine = static_cast<std::uint16_t>(load_le(header + 18, 2));
  const std::uint64_t phoff = load_le(header + 32, 8);
  const std::uint64_t phentsize = load_le(header + 54, 2);
  const std::uint64_t phnum = load_le(header + 56, 2);
  if (phnum == 0 || phnum > kMaxElfProgramHeaders || phentsize != kProgramHeaderBytes ||
      !util::range_inside(phoff, phnum * kProgramHeaderBytes, file_size)) {
    why = "its program header table is malformed";
    return std::nullopt;
  }
  std::string table(static_cast<std::size_t>(phnum * kProgramHeaderBytes), '\0');
  if (!read(phoff, table.size(), table.data())) {
    why = "cannot read its program headers";
    return std::nullopt;
  }
  std::vector<Segment> segments(static_cast<std::size_t>(phnum));
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const char* ph = table.data() + i * kProgramHeaderBytes;
    segments[i] = {static_cast<std::uint32_t>(load_le(ph, 4)), load_le(ph + 8, 8), load_le(ph + 16, 8),
                   load_le(ph + 32, 8), load_le(ph + 48, 8)};
  }
  bool have_build_id = false, have_dynamic = false;
  for (const Segment& s : segments) {
    if (s.type == PT_NOTE && !have_build_id) {
      std::optional<std::string> notes = segment_bytes(s, file_size, read, "note", why);
      if (!notes) return std::nullopt;
      have_build_id = util::find_gnu_build_id(*notes, s.align, kMaxElfBuildIdBytes, id.build_id, why);
      if (!why.empty()) return std::nullopt;
    } else if (s.type == PT_DYNAMIC && !have_dynamic) {
      have_dynamic = true;
      std::optional<std::string> dynamic = segment_bytes(s, file_size, read, "dynamic", why);
      if (!dynamic || !find_soname(*dynamic, segments, file_size, read, id.soname, why)) return std::nullopt;
    }
  }
  return id;
}

std::optional<ElfIdentity> read_elf_identity(std::string_view file, std::string& why) {
  return read_elf_identity(
      file.size(),
      [file](std::uint64_t offset, std::size_t size, char* out) {
        if (!util::range_inside(offset, size, file.size())) return false;
        std::memcpy(out, file.data() + offset, size);
        return true;
      },
      why);
}

}  // namespace nvrtc_cache::util
