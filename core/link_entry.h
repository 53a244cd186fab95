// LinkEntry: everything nvJitLink exposes after one nvJitLinkComplete, as stored in the cache (the
// linked CUBIN, PTX and LTO-IR, the error and info logs, each as its size and data getters answered), and
// its versioned, checksummed binary encoding. Link entries live under their own store keys
// (direct::link_result_store_key), beside the compile entries of core/compile_entry.h.
// Contract: plain value type; encode/decode are pure (no I/O), thread-safe, never throw on bad
// input. The bytes decoded are untrusted: decode returns nullopt for anything malformed, truncated,
// of another version, whose XXH3 checksum does not match or that is not well-formed, and allocates
// no more than the input's size for any count or length in it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/compile_entry.h"

namespace nvrtc_cache::core {

inline constexpr std::uint32_t kLinkEntryFormatVersion = 1;
// The largest nvJitLinkResult this build knows (NVJITLINK_ERROR_LTO_NOT_ENABLED, nvJitLink 13.0).
inline constexpr std::int32_t kLastKnownNvJitLinkResult = 18;
constexpr bool is_known_nvjitlink_result(std::int32_t rc) { return rc >= 0 && rc <= kLastKnownNvJitLinkResult; }

// What the link was, for people (`nvrtc-cache ls`, `inspect`): never used to serve a hit.
struct LinkDescription {
  std::vector<std::string> options;
  std::vector<std::string> input_names;  // in order; "" for a NULL name
  std::uint64_t input_bytes = 0;
  bool operator==(const LinkDescription&) const = default;
};

// The outputs of a link, in their order in an entry.
enum class LinkOutputKind { cubin, ptx, ltoir, error_log, info_log };
inline constexpr std::size_t kLinkOutputCount = 5;
inline constexpr LinkOutputKind kLinkOutputKinds[kLinkOutputCount] = {
    LinkOutputKind::cubin, LinkOutputKind::ptx, LinkOutputKind::ltoir, LinkOutputKind::error_log,
    LinkOutputKind::info_log};
// "cubin", "ptx", "ltoir", "error_log", "info_log".
const char* link_output_name(LinkOutputKind kind);

struct LinkEntry {
  std::int32_t complete_rc = 0;
  RecordedOutput cubin, ptx, error_log, info_log;
  RecordedOutput ltoir = unavailable_output();  // nvJitLink 13.1 on (nvJitLinkGetLinkedLTOIR)
  std::uint64_t link_nanos = 0;  // wall time of the real nvJitLinkComplete, for "saved time"
  LinkDescription description;

  RecordedOutput& output(LinkOutputKind kind);
  const RecordedOutput& output(LinkOutputKind kind) const;
  std::uint64_t payload_bytes() const;
};

// The most bytes past the size its getter reported that a data getter is seen to write (nvJitLink
// writes a NUL past an empty log, whose size is 0) and that an entry may hold.
inline constexpr std::size_t kMaxLinkBytesPastSize = 16;

// What the shim stores and replays: every output there (LTO-IR only where the library has its
// getters; an absent one is all zero); every return code a known nvJitLinkResult; a size getter that
// succeeded wrote its size, one that failed wrote nothing; a data getter that succeeded wrote exactly
// `size` bytes (and fewer than kMaxLinkBytesPastSize past them) after a successful size getter, one
// that failed wrote nothing.
bool is_well_formed(const LinkEntry& entry);

std::string encode_link_entry(const LinkEntry& entry);
std::optional<LinkEntry> decode_link_entry(std::string_view bytes);

}  // namespace nvrtc_cache::core
