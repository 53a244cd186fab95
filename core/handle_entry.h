// HandleEntry: everything a handle-based JIT library exposes after its one completing call — an
// nvJitLink link (nvJitLinkComplete) or a libNVVM compile (nvvmCompileProgram) — as stored in the
// cache: the call's return code and each output as its size and data getters answered, in the
// library's output order (outputs_of); and its versioned, checksummed binary encoding. These entries
// live under their own store keys (direct::handle_result_store_key), beside NVRTC's compile entries
// (core/compile_entry.h).
// Contract: plain value type; encode/decode are pure (no I/O), thread-safe, never throw on bad
// input. The bytes decoded are untrusted: decode returns nullopt for anything malformed, truncated,
// of another version, whose XXH3 checksum does not match or that is not well-formed, and allocates
// no more than the input's size for any count or length in it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/compile_entry.h"
#include "core/jit_library.h"

namespace nvrtc_cache::core {

// Version 2 adds the library's identity (HandleDescription::library); version 1 entries still decode
// (without it) and encode back to version 1.
inline constexpr std::uint32_t kHandleEntryFormatVersion = 2;
inline constexpr std::uint32_t kHandleEntryFormatVersionWithoutLibrary = 1;

// The libraries whose results are handle entries: JitLibrary::nvjitlink and ::nvvm (core/jit_library.h).

// One output of a library: its name, and whether a library of that kind may lack its getters (an
// output a newer release added).
struct OutputSpec {
  const char* name;
  bool optional;
};
// nvJitLink: cubin, ptx, ltoir (13.1 on: optional), error_log, info_log. libNVVM: result, log.
std::span<const OutputSpec> outputs_of(JitLibrary library);
// The largest return code this build knows for the library (nvJitLink 13.0's
// NVJITLINK_ERROR_LTO_NOT_ENABLED, libNVVM's NVVM_ERROR_CANCELLED).
std::int32_t last_known_result(JitLibrary library);
constexpr bool is_known_result(JitLibrary library, std::int32_t rc);

// The most bytes past the size its getter reported that a data getter is seen to write (nvJitLink
// writes a NUL past an empty log, whose size is 0) and that an entry may hold.
inline constexpr std::size_t kMaxBytesPastSize = 16;

// What the call was, for people (`nvrtc-cache verify`, `stats`): never used to serve a hit.
struct HandleDescription {
  std::vector<std::string> options;
  std::vector<std::string> input_names;  // in order; "" for a NULL name
  std::uint64_t input_bytes = 0;
  std::optional<LibraryVersion> library;  // absent in version 1 entries
  bool operator==(const HandleDescription&) const = default;
};

struct HandleEntry {
  JitLibrary library = JitLibrary::nvjitlink;
  std::int32_t rc = 0;                  // the completing call's
  std::vector<RecordedOutput> outputs;  // outputs_of(library).size() of them, in that order
  std::uint64_t nanos = 0;              // wall time of the real call, for "saved time"
  HandleDescription description;

  std::uint64_t payload_bytes() const;
};

// What the shim stores and replays: as many outputs as the library has, each there (an optional one
// may be all zero: the library lacked its getters); every return code one the library is known to
// give; a size getter that succeeded wrote its size, one that failed wrote nothing; a data getter that
// succeeded wrote `size` bytes (and fewer than kMaxBytesPastSize past them) after a successful size
// getter, one that failed wrote nothing.
bool is_well_formed(const HandleEntry& entry);

// The store keeps an encoded entry as compress_entry() (core/entry_compression.h) leaves it: decoding
// takes either form, expanding a compressed one within that file's bounds.
std::string encode_handle_entry(const HandleEntry& entry);
std::optional<HandleEntry> decode_handle_entry(std::string_view bytes);

constexpr bool is_known_result(JitLibrary library, std::int32_t rc) {
  return rc >= 0 && rc <= (library == JitLibrary::nvjitlink ? 18 : 10);
}

}  // namespace nvrtc_cache::core
