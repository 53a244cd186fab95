#include "util/pe_identity.h"

#include <cstring>
#include <vector>

#include "util/binary_io.h"

namespace nvrtc_cache::util {
namespace {

using util::load_le;

constexpr std::size_t kDosHeaderBytes = 64;
constexpr std::size_t kFileHeaderBytes = 20;       // IMAGE_FILE_HEADER
constexpr std::size_t kOptionalHeaderBytes = 240;  // IMAGE_OPTIONAL_HEADER64 with 16 directories
constexpr std::size_t kSectionHeaderBytes = 40;    // IMAGE_SECTION_HEADER
constexpr std::size_t kExportDirectoryBytes = 40;  // IMAGE_EXPORT_DIRECTORY
constexpr std::uint16_t kPe32PlusMagic = 0x20b;
constexpr std::uint16_t kFileDll = 0x2000;

struct Section {
  std::uint32_t virtual_address = 0;
  std::uint32_t raw_size = 0;
  std::uint32_t raw_offset = 0;
};

bool read_inside(std::uint64_t offset, std::size_t size, std::uint64_t file_size, const PeReadAt& read, char* out) {
  return util::range_inside(offset, size, file_size) && read(offset, size, out);
}

// The file offset of `rva` and how many of the section's file bytes follow it, through the section
// that holds it in the file.
std::optional<std::pair<std::uint64_t, std::uint64_t>> file_offset_of(std::uint32_t rva,
                                                                      const std::vector<Section>& sections) {
  for (const Section& s : sections) {
    const std::uint64_t start = s.virtual_address;
    if (rva < start || rva - start >= s.raw_size) continue;
    return std::pair<std::uint64_t, std::uint64_t>{std::uint64_t{s.raw_offset} + (rva - start),
                                                   s.raw_size - (rva - start)};
  }
  return std::nullopt;
}

// The export directory's Name: true with `name` (nullopt when there is no export directory); false
// with `why` when malformed.
bool find_export_name(std::uint32_t directory_rva, std::uint32_t directory_size, const std::vector<Section>& sections,
                      std::uint64_t file_size, const PeReadAt& read, std::optional<std::string>& name,
                      std::string& why) {
  if (directory_rva == 0 || directory_size == 0) return true;
  const auto directory = file_offset_of(directory_rva, sections);
  char bytes[kExportDirectoryBytes];
  if (!directory || directory->second < kExportDirectoryBytes ||
      !read_inside(directory->first, sizeof bytes, file_size, read, bytes)) {
    why = "its export directory lies outside the file";
    return false;
  }
  const auto name_rva = static_cast<std::uint32_t>(load_le(bytes + 12, 4));
  const auto at = file_offset_of(name_rva, sections);
  if (!at) {
    why = "its export name lies outside the file";
    return false;
  }
  const std::uint64_t available = std::min<std::uint64_t>(at->second, file_size - std::min(file_size, at->first));
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(available, kMaxPeExportNameBytes + 1));
  std::string text(n, '\0');
  if (n == 0 || !read_inside(at->first, n, file_size, read, text.data())) {
    why = "its export name lies outside the file";
    return false;
  }
  const std::size_t end = text.find('\0');
  if (end == std::string::npos) {
    why = "its export name is unterminated or implausibly long";
    return false;
  }
  text.resize(end);
  name = std::move(text);
  return true;
}

}  // namespace

std::string pe_build_id(std::uint32_t time_date_stamp, std::uint32_t size_of_image, std::uint32_t checksum) {
  std::string id = "pe:";
  for (const std::uint32_t v : {time_date_stamp, size_of_image, checksum}) {
    for (int i = 0; i < 4; ++i) id.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  return id;
}

namespace {

// The identity; the export name only `with_export_name` (an image's headers alone, in memory, have
// no sections' file bytes after them).
std::optional<PeIdentity> read_pe(std::uint64_t file_size, const PeReadAt& read, bool with_export_name,
                                  std::string& why) {
  char dos[kDosHeaderBytes];
  if (!read_inside(0, sizeof dos, file_size, read, dos) || dos[0] != 'M' || dos[1] != 'Z') {
    why = "it is not a Windows image (no MZ header)";
    return std::nullopt;
  }
  const auto nt = static_cast<std::uint32_t>(load_le(dos + 0x3c, 4));
  char headers[4 + kFileHeaderBytes + kOptionalHeaderBytes] = {};
  if (nt > kMaxPeHeaderOffset || !read_inside(nt, 4 + kFileHeaderBytes, file_size, read, headers) ||
      std::memcmp(headers, "PE\0\0", 4) != 0) {
    why = "it is not a PE image (no PE header)";
    return std::nullopt;
  }
  const char* file_header = headers + 4;
  PeIdentity id;
  id.machine = static_cast<std::uint16_t>(load_le(file_header, 2));
  const auto sections_count = static_cast<std::uint16_t>(load_le(file_header + 2, 2));
  const auto time_date_stamp = static_cast<std::uint32_t>(load_le(file_header + 4, 4));
  const auto optional_size = static_cast<std::uint16_t>(load_le(file_header + 16, 2));
  id.dll = (load_le(file_header + 18, 2) & kFileDll) != 0;
  const std::uint64_t optional_at = std::uint64_t{nt} + 4 + kFileHeaderBytes;
  const char* optional = headers + 4 + kFileHeaderBytes;
  if (optional_size < 112 ||
      !read_inside(optional_at, std::min<std::size_t>(optional_size, kOptionalHeaderBytes), file_size, read,
                   headers + 4 + kFileHeaderBytes) ||
      load_le(optional, 2) != kPe32PlusMagic) {
    why = "it is not a 64-bit PE image (no PE32+ optional header)";
    return std::nullopt;
  }
  id.build_id = pe_build_id(time_date_stamp, static_cast<std::uint32_t>(load_le(optional + 56, 4)),
                            static_cast<std::uint32_t>(load_le(optional + 64, 4)));
  const auto directories = static_cast<std::uint32_t>(load_le(optional + 108, 4));
  std::uint32_t export_rva = 0, export_size = 0;
  if (directories >= 1 && optional_size >= 120) {
    export_rva = static_cast<std::uint32_t>(load_le(optional + 112, 4));
    export_size = static_cast<std::uint32_t>(load_le(optional + 116, 4));
  }
  if (!with_export_name) return id;
  if (sections_count > kMaxPeSections) {
    why = "it has implausibly many sections";
    return std::nullopt;
  }
  std::vector<Section> sections(sections_count);
  const std::uint64_t sections_at = optional_at + optional_size;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    char s[kSectionHeaderBytes];
    if (!read_inside(sections_at + i * kSectionHeaderBytes, sizeof s, file_size, read, s)) {
      why = "its section table lies outside the file";
      return std::nullopt;
    }
    sections[i] = {static_cast<std::uint32_t>(load_le(s + 12, 4)), static_cast<std::uint32_t>(load_le(s + 16, 4)),
                   static_cast<std::uint32_t>(load_le(s + 20, 4))};
  }
  if (!find_export_name(export_rva, export_size, sections, file_size, read, id.export_name, why)) return std::nullopt;
  return id;
}

PeReadAt memory_reader(std::string_view bytes) {
  return [bytes](std::uint64_t offset, std::size_t size, char* out) {
    if (offset > bytes.size() || size > bytes.size() - offset) return false;
    std::memcpy(out, bytes.data() + offset, size);
    return true;
  };
}

}  // namespace

std::optional<PeIdentity> read_pe_identity(std::uint64_t file_size, const PeReadAt& read, std::string& why) {
  return read_pe(file_size, read, true, why);
}

std::optional<std::string> read_pe_build_id(std::string_view headers, std::string& why) {
  std::optional<PeIdentity> id = read_pe(headers.size(), memory_reader(headers), false, why);
  if (!id) return std::nullopt;
  return std::move(id->build_id);
}

std::optional<PeIdentity> read_pe_identity(std::string_view file, std::string& why) {
  return read_pe(file.size(), memory_reader(file), true, why);
}

}  // namespace nvrtc_cache::util
