// The LMDB store's own small records, as pure codecs: the per-entry access record and the 8-byte
// counters and totals. (LMDB's own on-disk layouts are in store/lmdb/page_layout.h.)
// In nvrtc_cache::store rather than ::lmdb: the fuzzers and tests decode them too.
// Contract: every input is untrusted (another process, a damaged disk or a hostile writer may have
// put anything there): decoders return nullopt for anything not exactly well-formed and never read
// outside the bytes given. Pure, no I/O, thread-safe, fork-safe, never throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "util/binary_io.h"

namespace nvrtc_cache::store {

// ---- Little-endian u64 values: counters ("counters") and totals ("meta"), written by util::store_le ----
inline constexpr std::size_t kCounterRecordSize = 8;
// nullopt unless `bytes` is exactly 8 bytes.
std::optional<std::uint64_t> decode_le64(std::string_view bytes);

// ---- The per-entry access record ("access", under the entry's key) ----
struct AccessRecord {
  std::uint64_t payload_size = 0;
  std::int64_t created = 0;
  std::int64_t last_access = 0;
  bool operator==(const AccessRecord&) const = default;
};
inline constexpr std::size_t kAccessRecordSize = 24;
void encode_access(const AccessRecord& record, char* out);  // writes kAccessRecordSize bytes
std::optional<AccessRecord> decode_access(std::string_view bytes);

}  // namespace nvrtc_cache::store
