#include "store/lmdb/records.h"

namespace nvrtc_cache::store {

std::optional<std::uint64_t> decode_le64(std::string_view bytes) {
  if (bytes.size() != kCounterRecordSize) return std::nullopt;
  return load_le(bytes.data(), 8);
}

void encode_access(const AccessRecord& record, char* out) {
  store_le64(out, record.payload_size);
  store_le64(out + 8, static_cast<std::uint64_t>(record.created));
  store_le64(out + 16, static_cast<std::uint64_t>(record.last_access));
}

std::optional<AccessRecord> decode_access(std::string_view bytes) {
  if (bytes.size() != kAccessRecordSize) return std::nullopt;
  AccessRecord record;
  record.payload_size = load_le(bytes.data(), 8);
  record.created = static_cast<std::int64_t>(load_le(bytes.data() + 8, 8));
  record.last_access = static_cast<std::int64_t>(load_le(bytes.data() + 16, 8));
  return record;
}

}  // namespace nvrtc_cache::store
