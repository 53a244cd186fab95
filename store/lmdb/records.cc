#include "store/lmdb/records.h"

namespace nvrtc_cache::store {

std::optional<std::uint64_t> decode_le64(std::string_view bytes) {
  if (bytes.size() != kCounterRecordSize) return std::nullopt;
  return util::load_le(bytes.data(), 8);
}

void encode_access(const AccessRecord& record, char* out) {
  util::store_le(out, record.payload_size, 8);
  util::store_le(out + 8, static_cast<std::uint64_t>(record.created), 8);
  util::store_le(out + 16, static_cast<std::uint64_t>(record.last_access), 8);
}

std::optional<AccessRecord> decode_access(std::string_view bytes) {
  if (bytes.size() != kAccessRecordSize) return std::nullopt;
  AccessRecord record;
  record.payload_size = util::load_le(bytes.data(), 8);
  record.created = static_cast<std::int64_t>(util::load_le(bytes.data() + 8, 8));
  record.last_access = static_cast<std::int64_t>(util::load_le(bytes.data() + 16, 8));
  return record;
}

}  // namespace nvrtc_cache::store
