// CompileEntry: everything NVRTC exposes after one compile, as stored in the cache, and its
// versioned, checksummed binary encoding.
// Contract: plain value type; encode/decode are pure (no I/O), thread-safe, never throw on bad
// input (decode returns nullopt for anything malformed, truncated, of another version, or whose
// XXH3 checksum does not match).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvrtc_cache::shim {

inline constexpr std::uint32_t kEntryFormatVersion = 1;

// One output kind (log, PTX, CUBIN, LTO-IR, OptiX-IR) as its size and data getters answered.
struct RecordedOutput {
  std::int32_t size_rc = 0;
  bool size_written = false;  // whether the size getter wrote *size
  std::uint64_t size = 0;
  std::int32_t data_rc = 0;
  std::string bytes;  // what the data getter wrote (empty if it failed)
};

struct RecordedLoweredName {
  std::string expression;
  std::int32_t rc = 0;
  bool written = false;    // whether NVRTC wrote *lowered_name
  bool is_null = true;     // it wrote NULL
  std::string lowered;     // otherwise this string
};

struct CompileEntry {
  std::int32_t compile_rc = 0;
  RecordedOutput log, ptx, cubin, ltoir, optixir;
  std::vector<RecordedLoweredName> lowered_names;  // one per name expression, in order of addition
  RecordedLoweredName unknown_name;  // how NVRTC answered a name expression it was never given
  std::int32_t pch_create_status = 0;
  std::int32_t pch_heap_required_rc = 0;
  bool pch_heap_required_written = false;
  std::uint64_t pch_heap_required = 0;
  std::uint64_t compile_nanos = 0;  // wall time of the real compile, for "saved time"

  std::uint64_t payload_bytes() const;
};

std::string encode_entry(const CompileEntry& entry);
std::optional<CompileEntry> decode_entry(std::string_view bytes);

}  // namespace nvrtc_cache::shim
