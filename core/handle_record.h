// HandleCallRecord: what a process's nvJitLink link or libNVVM compile needs to be repeated
// elsewhere (`nvrtc-cache replay`): which library (nvJitLink or libNVVM, its path as loaded, version
// and build-id), the working directory, and every input as keyed (keying/handle_inputs.h): for a
// link the options in order and each input in order (type, name or NULL, bytes; a file added by
// path by its content as read, with the path as its name), for an NVVM compile each module in order
// (bytes, name, lazy or not), a verification's options, and the compile's options.
// Frame: "NVRH", a u32 version (kHandleRecordFormatVersion), a u64 body length, the body and an
// XXH3-64 (util/binary_io.h), appended to the same file as NVRTC's compile records
// (core/compile_record.h, whose scan_records() reads both kinds). Every byte read back is untrusted:
// the decoder checks each count and size against what is left before it allocates.
// Contract: pure; no I/O; thread-compatible; never throws except std::bad_alloc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/handle_entry.h"
#include "keying/handle_inputs.h"

namespace nvrtc_cache::core {

inline constexpr std::string_view kHandleRecordMagic = "NVRH";
inline constexpr std::uint32_t kHandleRecordFormatVersion = 1;

// libNVVM's input types in a record (libraries/nvvm/hooks.cc): a module, a lazily added module, and
// a verification (its options, each followed by a NUL).
inline constexpr std::int32_t kNvvmModule = 0;
inline constexpr std::int32_t kNvvmLazyModule = 1;
inline constexpr std::int32_t kNvvmVerification = 2;

struct HandleCallRecord {
  JitLibrary library = JitLibrary::nvjitlink;
  std::string library_path;       // the real library as the process loaded it
  std::string working_directory;  // where the call was made (a relative file name is from here)
  keying::HandleInputs inputs;
};

// One complete frame, ready to be appended.
std::string encode_handle_record(const HandleCallRecord& record);
// One frame (exactly), or nullopt when it is not one encode_handle_record() wrote.
std::optional<HandleCallRecord> decode_handle_record(std::string_view frame);

// Everything that identifies the call: two records with the same identity are the same call.
std::string handle_call_identity(const HandleCallRecord& record);

}  // namespace nvrtc_cache::core
