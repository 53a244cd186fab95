// What identifies a Windows DLL (a PE32+ image), read from the file without loading it: its machine,
// whether it is a DLL, the identity the proxy records for the NVRTC it loaded (keying's build_id:
// "pe:" and the little-endian TimeDateStamp, SizeOfImage and CheckSum of its headers, as
// shim/windows/runtime.cc reads them from the mapped image, where the headers are the file's first
// bytes unchanged) and the name its export directory gives itself ("nvrtc64_130_0.dll"), the SONAME's
// counterpart. Used by `nvrtc-cache.exe replay` to decide whether a recording's DLL may be loaded at
// all (tools/doctor/nvrtc_dll_check.h). Portable: the tests and fuzzers read it on Linux too.
// The file is untrusted: every offset, size and count is checked, overflow-free, against the file's
// size and fixed limits before anything is read or allocated; the parser asks `read` only for bytes
// inside the file (fuzz/pe_identity_fuzzer.cc).
// Contract: pure apart from the caller's `read`; thread-compatible; never throws except std::bad_alloc
// (and what `read` throws).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace nvrtc_cache::util {

struct PeIdentity {
  std::uint16_t machine = 0;               // IMAGE_FILE_HEADER.Machine: 0x8664 for x64
  bool dll = false;                        // IMAGE_FILE_DLL
  std::string build_id;                    // "pe:" + 12 bytes
  std::optional<std::string> export_name;  // the export directory's Name; nullopt when it has none
};

inline constexpr std::uint16_t kPeMachineAmd64 = 0x8664;
inline constexpr std::uint32_t kMaxPeHeaderOffset = 1 << 16;  // e_lfanew
inline constexpr std::uint16_t kMaxPeSections = 96;           // the loader's own limit
inline constexpr std::size_t kMaxPeExportNameBytes = 256;

// Reads exactly `size` bytes at `offset` into `out`; false when it cannot.
using PeReadAt = std::function<bool(std::uint64_t offset, std::size_t size, char* out)>;

// The identity of the file of `file_size` bytes that `read` reads; nullopt with `why` set when it is
// not a PE32+ image or is malformed.
std::optional<PeIdentity> read_pe_identity(std::uint64_t file_size, const PeReadAt& read, std::string& why);
// The same for a file held in memory.
std::optional<PeIdentity> read_pe_identity(std::string_view file, std::string& why);

// The build_id alone from an image's headers (a loaded module's first page: the file's headers,
// unchanged); nullopt with `why` when they are not a PE32+ image's.
std::optional<std::string> read_pe_build_id(std::string_view headers, std::string& why);

// The build_id of an image's headers: "pe:" + TimeDateStamp, SizeOfImage, CheckSum (little-endian).
std::string pe_build_id(std::uint32_t time_date_stamp, std::uint32_t size_of_image, std::uint32_t checksum);

}  // namespace nvrtc_cache::util
