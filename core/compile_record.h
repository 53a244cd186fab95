// CompileRecord: what a process's compile needs to be repeated elsewhere (`nvrtc-cache replay`): the
// NVRTC library (path as loaded, version, build-id), the program's C API inputs, the working
// directory and $PWD, and the dependency set the compile was served or stored with (paths with
// their fingerprints, environment variables). NVRTC_CACHE_RECORD names the file they are appended
// to (shim/record_writer.h).
// File format: a sequence of self-describing frames, each "NVRR", a u32 version, a u64 body length,
// the body, and an XXH3-64 of everything before it (util/binary_io.h). A file is untrusted input:
// scan_records() decodes what is intact and reports every damaged or unknown stretch (a truncated
// tail, flipped bytes, a frame of another version), resynchronising at the next magic. The same file
// holds the records of nvJitLink links and libNVVM compiles, frames of their own kind
// (core/handle_record.h), which scan_records() reads too.
// Contract: pure; no I/O; thread-compatible; never throws except std::bad_alloc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/handle_record.h"
#include "direct/dependencies.h"
#include "keying/program_inputs.h"

namespace nvrtc_cache::core {

inline constexpr std::uint32_t kRecordFormatVersion = 1;

struct CompileRecord {
  std::string library_path;  // the real NVRTC as the process loaded it
  keying::ProgramInputs inputs;
  direct::DependencySet dependencies;
};

// One complete frame, ready to be appended.
std::string encode_record(const CompileRecord& record);
// The same from its parts (what the shim holds), without copying them into a CompileRecord.
std::string encode_record(std::string_view library_path, const keying::ProgramInputs& inputs,
                          const direct::DependencySet& dependencies);
// One frame (exactly, nothing after it), or nullopt when it is not one encode_record() wrote.
std::optional<CompileRecord> decode_record(std::string_view frame);

// Everything that identifies the program and its library (not the dependency set): two records
// with the same identity are the same program.
std::string program_identity(const CompileRecord& record);

struct RecordDamage {
  std::uint64_t offset = 0;  // in the file
  std::uint64_t length = 0;  // bytes skipped
  std::string what;          // "truncated frame", "checksum mismatch", ...
};

struct RecordScan {
  std::vector<CompileRecord> records;            // NVRTC's compiles, in file order
  std::vector<HandleCallRecord> handle_records;  // links and NVVM compiles, in file order
  std::vector<RecordDamage> damage;
};
RecordScan scan_records(std::string_view file);

}  // namespace nvrtc_cache::core
