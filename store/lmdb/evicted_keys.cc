#include "store/lmdb/evicted_keys.h"

#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <string>

#include "store/lmdb/library.h"
#include "util/binary_io.h"

namespace nvrtc_cache::store::lmdb {
namespace {

constexpr std::string_view kEvictedKeysName = "evicted_keys";

std::uint64_t hash_of(std::string_view key) {
  const std::uint64_t h = XXH3_64bits(key.data(), key.size());
  return h == 0 ? 1 : h;  // 0 marks an empty slot
}

}  // namespace

void EvictedKeys::add(std::string_view key) { hashes[written++ % kEvictedKeySlots] = hash_of(key); }

bool EvictedKeys::contains(std::string_view key) const {
  return std::find(hashes.begin(), hashes.end(), hash_of(key)) != hashes.end();
}

void encode_evicted_keys(const EvictedKeys& keys, char* out) {
  util::store_le(out, keys.written, 8);
  for (std::size_t i = 0; i < kEvictedKeySlots; ++i) util::store_le(out + 8 + 8 * i, keys.hashes[i], 8);
}

std::optional<EvictedKeys> decode_evicted_keys(std::string_view bytes) {
  if (bytes.size() != kEvictedKeysRecordSize) return std::nullopt;
  EvictedKeys keys;
  keys.written = util::load_le(bytes.data(), 8);
  for (std::size_t i = 0; i < kEvictedKeySlots; ++i) keys.hashes[i] = util::load_le(bytes.data() + 8 + 8 * i, 8);
  return keys;
}

int remember_evicted(MDB_txn* txn, MDB_dbi meta, const std::vector<std::string>& keys) {
  if (keys.empty()) return MDB_SUCCESS;
  MDB_val name = to_val(kEvictedKeysName);
  MDB_val value;
  const int rc = api().mdb_get(txn, meta, &name, &value);
  if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return rc;
  auto ring = std::make_unique<EvictedKeys>();
  if (rc == MDB_SUCCESS) *ring = decode_evicted_keys(to_view(value)).value_or(EvictedKeys{});
  for (const std::string& key : keys) ring->add(key);
  auto bytes = std::make_unique<char[]>(kEvictedKeysRecordSize);
  encode_evicted_keys(*ring, bytes.get());
  MDB_val updated{kEvictedKeysRecordSize, bytes.get()};
  return api().mdb_put(txn, meta, &name, &updated, 0);
}

bool was_evicted(MDB_txn* txn, MDB_dbi meta, std::string_view key) {
  MDB_val name = to_val(kEvictedKeysName);
  MDB_val value;
  if (api().mdb_get(txn, meta, &name, &value) != MDB_SUCCESS || value.mv_size != kEvictedKeysRecordSize) return false;
  const std::uint64_t wanted = hash_of(key);
  const char* slots = static_cast<const char*>(value.mv_data) + 8;
  for (std::size_t i = 0; i < kEvictedKeySlots; ++i) {
    if (util::load_le(slots + 8 * i, 8) == wanted) return true;
  }
  return false;
}

int forget_evicted(MDB_txn* txn, MDB_dbi meta) {
  MDB_val name = to_val(kEvictedKeysName);
  const int rc = api().mdb_del(txn, meta, &name, nullptr);
  return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

}  // namespace nvrtc_cache::store::lmdb
