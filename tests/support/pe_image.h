// A minimal 64-bit Windows DLL image, built byte by byte for the PE reader's tests and fuzz seeds
// (util/pe_identity.h): DOS header, PE headers with 16 data directories, one section ".edata" at RVA
// 0x1000 (file offset 0x200) holding the export directory and its name. 0x400 bytes.
// Header-only; pure.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace nvrtc_cache::testing {

struct PeImageFields {
  std::uint32_t time_date_stamp = 0x68a639d8;
  std::uint32_t size_of_image = 0x2000;
  std::uint32_t checksum = 0x1234;
  std::string export_name = "nvrtc64_130_0.dll";
};

inline std::string minimal_pe_dll(const PeImageFields& f = {}) {
  std::string image(0x400, '\0');
  const auto put = [&image](std::size_t at, std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) image[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
  };
  image[0] = 'M';
  image[1] = 'Z';
  put(0x3c, 0x40, 4);
  std::memcpy(image.data() + 0x40, "PE\0\0", 4);
  const std::size_t file_header = 0x44;
  put(file_header, 0x8664, 2);  // Machine: x64
  put(file_header + 2, 1, 2);   // NumberOfSections
  put(file_header + 4, f.time_date_stamp, 4);
  put(file_header + 16, 240, 2);     // SizeOfOptionalHeader
  put(file_header + 18, 0x2022, 2);  // DLL, executable, large-address aware
  const std::size_t optional = file_header + 20;
  put(optional, 0x20b, 2);  // PE32+
  put(optional + 56, f.size_of_image, 4);
  put(optional + 60, 0x200, 4);  // SizeOfHeaders
  put(optional + 64, f.checksum, 4);
  put(optional + 108, 16, 4);      // NumberOfRvaAndSizes
  put(optional + 112, 0x1000, 4);  // the export directory's RVA and size
  put(optional + 116, 40 + f.export_name.size() + 1, 4);
  const std::size_t section = optional + 240;
  std::memcpy(image.data() + section, ".edata", 6);
  put(section + 8, 0x200, 4);       // VirtualSize
  put(section + 12, 0x1000, 4);     // VirtualAddress
  put(section + 16, 0x200, 4);      // SizeOfRawData
  put(section + 20, 0x200, 4);      // PointerToRawData
  put(0x200 + 12, 0x1000 + 40, 4);  // the export directory's Name
  std::memcpy(image.data() + 0x200 + 40, f.export_name.data(), f.export_name.size());
  return image;
}

}  // namespace nvrtc_cache::testing
