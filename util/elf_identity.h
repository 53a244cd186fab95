// What identifies an ELF shared object, read from the file without loading it: its type, machine,
// GNU build-id (NT_GNU_BUILD_ID in a PT_NOTE segment) and SONAME (DT_SONAME of PT_DYNAMIC). Used to
// decide whether a library may be loaded at all (tools/doctor/nvrtc_library_check.h): loading one runs its
// code. Only ELF64 little-endian files are read (x86-64 and aarch64, the machines the cache runs on).
// The file is untrusted: every offset, size and count it holds is checked, overflow-free, against the
// file's size and against fixed limits before anything is read or allocated; the parser asks `read`
// only for bytes inside the file; a malformed file is reported, never a crash
// (fuzz/elf_identity_fuzzer.cc).
// Contract: pure apart from the caller's `read` (no I/O of its own); thread-compatible; never throws
// except std::bad_alloc (and what `read` throws).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "util/elf_notes.h"

namespace nvrtc_cache::util {

struct ElfIdentity {
  std::uint16_t type = 0;             // e_type: ET_DYN for a shared object
  std::uint16_t machine = 0;          // e_machine: EM_X86_64, EM_AARCH64, ...
  std::string build_id;               // raw bytes of the first NT_GNU_BUILD_ID note; "" when there is none
  std::optional<std::string> soname;  // DT_SONAME; nullopt when there is none
};

// Limits on what is read: larger segments and fields are reported as malformed.
inline constexpr std::size_t kMaxElfProgramHeaders = 4096;
inline constexpr std::uint64_t kMaxElfSegmentBytes = 1 << 20;  // a PT_NOTE or PT_DYNAMIC segment
inline constexpr std::size_t kMaxElfBuildIdBytes = util::kMaxBuildIdBytes;
inline constexpr std::size_t kMaxElfSonameBytes = 4096;

// Reads exactly `size` bytes at `offset` into `out`; false when it cannot.
using ElfReadAt = std::function<bool(std::uint64_t offset, std::size_t size, char* out)>;

// The identity of the file of `file_size` bytes that `read` reads; nullopt with `why` set when it is
// not an ELF64 little-endian file or is malformed.
std::optional<ElfIdentity> read_elf_identity(std::uint64_t file_size, const ElfReadAt& read, std::string& why);
// The same for a file held in memory.
std::optional<ElfIdentity> read_elf_identity(std::string_view file, std::string& why);

}  // namespace nvrtc_cache::util
