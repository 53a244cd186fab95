// CompileEntry: everything NVRTC exposes after one compile, as stored in the cache, and its
// versioned, checksummed binary encoding.
// Contract: plain value type; encode/decode are pure (no I/O), thread-safe, never throw on bad
// input. The bytes decoded are untrusted (anyone who can write the cache can recompute the
// checksum): decode returns nullopt for anything malformed, truncated, of another version, whose
// XXH3 checksum does not match, or that is not well-formed (see is_well_formed), and allocates no
// more than the input's size for any count or length in it. decode_entry() also takes an entry
// compressed by compress_entry() (core/entry_compression.h, which bounds what it expands).
#pragma once

#include <nvrtc.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvrtc_cache::core {

// Version 4 adds the identity of the library that made the entry (EntryDescription::library); version 3 adds the outputs of NVRTCs other than 13.0 (Tile IR, 12.x's NVVM), each with whether the
// library has its getter; version 2 added the program's description (EntryDescription) after the
// body. Version 1 and 2 entries still decode (without those outputs: they answer no NVRTC that has
// their getters, see covers_outputs_of) and encode back to their version.
inline constexpr std::uint32_t kEntryFormatVersion = 4;
inline constexpr std::uint32_t kEntryFormatVersionWithoutLibrary = 3;
inline constexpr std::uint32_t kEntryFormatVersionWithoutNewerOutputs = 2;
inline constexpr std::uint32_t kEntryFormatVersionWithoutDescription = 1;
// NVRTC 13.5's NVRTC_ERROR_BUSY (nvrtcInstallBundledHeaders only), absent from the 13.0 header.
inline constexpr std::int32_t kNvrtcErrorBusy = 18;
// The largest nvrtcResult this build knows (NVRTC 13.5); a recorded code above it is not replayed.
inline constexpr std::int32_t kLastKnownNvrtcResult = kNvrtcErrorBusy;

constexpr bool is_known_nvrtc_result(std::int32_t rc) { return rc >= NVRTC_SUCCESS && rc <= kLastKnownNvrtcResult; }

// One output kind (log, PTX, CUBIN, LTO-IR, OptiX-IR, Tile IR, NVVM) as its size and data getters
// answered.
struct RecordedOutput {
  std::int32_t size_rc = 0;
  bool size_written = false;  // whether the size getter wrote *size
  std::uint64_t size = 0;
  std::int32_t data_rc = 0;
  std::string bytes;      // what the data getter wrote (empty if it failed)
  bool available = true;  // the library has this output's getters (otherwise every field above is 0)
};

// An output kind the library has no getters for.
inline RecordedOutput unavailable_output() {
  RecordedOutput o;
  o.available = false;
  return o;
}

struct RecordedLoweredName {
  std::string expression;
  std::int32_t rc = 0;
  bool written = false;  // whether NVRTC wrote *lowered_name
  bool is_null = true;   // it wrote NULL
  std::string lowered;   // otherwise this string
};

// Which build of a library made an entry (its version as the library reports it, and the GNU build-id of the
// loaded object, raw bytes, empty when it has none), for people: keys hold the identity by themselves.
struct LibraryVersion {
  std::int32_t major = 0;
  std::int32_t minor = 0;
  std::string build_id;
  bool operator==(const LibraryVersion&) const = default;
};
// "13.0", or "unknown" for an entry made before entries recorded it.
std::string version_text(const std::optional<LibraryVersion>& library);
// The build-id in hex, "" when unknown or absent.
std::string build_id_hex(const std::optional<LibraryVersion>& library);

// What the program was, for people (`nvrtc-cache ls`, `inspect`): never used to serve a hit.
struct EntryDescription {
  std::string program_name;
  std::vector<std::string> options;
  std::vector<std::string> header_names;  // in-memory headers, in order
  std::uint64_t source_bytes = 0;
  std::optional<LibraryVersion> library;  // absent in entries before version 4
  bool operator==(const EntryDescription&) const = default;
};

// The output kinds, in their order in an entry; kOutputCount of them.
enum class OutputKind { log, ptx, cubin, ltoir, optixir, tileir, nvvm };
inline constexpr std::size_t kOutputCount = 7;
// The outputs every NVRTC from 12.0 on has (versions 1 and 2 of the format hold only these).
inline constexpr std::size_t kBaseOutputCount = 5;
// "log", "ptx", "cubin", "ltoir", "optixir", "tileir", "nvvm".
const char* output_name(OutputKind kind);

struct CompileEntry {
  std::int32_t compile_rc = 0;
  RecordedOutput log, ptx, cubin, ltoir, optixir;
  RecordedOutput tileir = unavailable_output();    // NVRTC 13.5 on
  RecordedOutput nvvm = unavailable_output();      // NVRTC 12.x
  std::vector<RecordedLoweredName> lowered_names;  // one per name expression, in order of addition
  RecordedLoweredName unknown_name;                // how NVRTC answered a name expression it was never given
  std::int32_t pch_create_status = 0;
  std::int32_t pch_heap_required_rc = 0;
  bool pch_heap_required_written = false;
  std::uint64_t pch_heap_required = 0;
  std::uint64_t compile_nanos = 0;              // wall time of the real compile, for "saved time"
  std::optional<EntryDescription> description;  // absent in version 1 entries

  std::uint64_t payload_bytes() const;
  RecordedOutput& output(OutputKind kind);
  const RecordedOutput& output(OutputKind kind) const;
};

inline constexpr OutputKind kOutputKinds[kOutputCount] = {OutputKind::log,   OutputKind::ptx,     OutputKind::cubin,
                                                          OutputKind::ltoir, OutputKind::optixir, OutputKind::tileir,
                                                          OutputKind::nvvm};

// The entries capture_outputs() produces that the shim stores (store_result() stores no other):
// every return code a known nvrtcResult; an output whose getters the library lacks is all zero; every size getter
// succeeded and wrote its size; a data getter that succeeded wrote exactly `size` bytes, and one that failed wrote none
// after a size of 0 (every size replayed is backed by bytes: a host allocates what it is told); a lowered name left
// unwritten is not NULL, and a NULL one has no text; names hold no NUL (they were C strings); the
// unknown name's expression is empty; an unwritten PCH heap size is 0. Replay relies on it.
bool is_well_formed(const CompileEntry& entry);

// The uncompressed encoding (core/entry_compression.h compresses it for the store).
std::string encode_entry(const CompileEntry& entry);
std::optional<CompileEntry> decode_entry(std::string_view bytes);

}  // namespace nvrtc_cache::core
