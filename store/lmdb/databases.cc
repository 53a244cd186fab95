#include "store/lmdb/databases.h"

#include "store/envelope.h"
#include "store/lmdb/arithmetic.h"
#include "store/lmdb/library.h"

namespace nvrtc_cache::store::lmdb {
namespace {

constexpr const char* kEntriesDb = "entries";
constexpr const char* kCountersDb = "counters";
constexpr const char* kMetaDb = "meta";
constexpr const char* kAccessDb = "access";
constexpr std::string_view kEntryCountKey = "entry_count";
constexpr std::string_view kPayloadBytesKey = "payload_bytes";
constexpr std::string_view kLastEvictionKey = "last_eviction";

// Opens all four databases in one transaction (`flags`: 0 or MDB_CREATE) and commits it, which
// keeps the handles.
int open_named_in(MDB_txn* txn, SharedEnv& shared, unsigned flags) {
  int rc = api().mdb_dbi_open(txn, kEntriesDb, flags, &shared.entries);
  if (rc == MDB_SUCCESS) rc = api().mdb_dbi_open(txn, kCountersDb, flags, &shared.counters);
  if (rc == MDB_SUCCESS) rc = api().mdb_dbi_open(txn, kMetaDb, flags, &shared.meta);
  if (rc == MDB_SUCCESS) rc = api().mdb_dbi_open(txn, kAccessDb, flags, &shared.access);
  return rc;
}

// Runs `open` in a transaction of `txn_flags`, committing on success.
template <typename Open>
int in_transaction(MDB_env* env, unsigned txn_flags, Open open) {
  MDB_txn* txn = nullptr;
  int rc = api().mdb_txn_begin(env, nullptr, txn_flags, &txn);
  if (rc != MDB_SUCCESS) return rc;
  rc = open(txn);
  if (rc != MDB_SUCCESS) {
    api().mdb_txn_abort(txn);
    return rc;
  }
  return api().mdb_txn_commit(txn);
}

std::uint64_t read_meta(MDB_txn* txn, MDB_dbi meta, std::string_view name) {
  MDB_val key = to_val(name);
  MDB_val value;
  if (api().mdb_get(txn, meta, &key, &value) != MDB_SUCCESS) return 0;
  return decode_le64(to_view(value)).value_or(0);
}

int write_meta(MDB_txn* txn, MDB_dbi meta, std::string_view name, std::uint64_t number) {
  char bytes[kCounterRecordSize];
  util::store_le(bytes, number, 8);
  MDB_val key = to_val(name);
  MDB_val value{sizeof bytes, bytes};
  return api().mdb_put(txn, meta, &key, &value, 0);
}

}  // namespace

// Looking the databases up needs no write; a store that has pages but lacks them is damaged
// (creating them would write to it), not new. That is decided under the writer lock: another
// process opening the new store at the same time may have created them since the look-up.
int open_databases(MDB_env* env, SharedEnv& shared) {
  const int found = in_transaction(env, MDB_RDONLY, [&](MDB_txn* txn) { return open_named_in(txn, shared, 0); });
  if (found == MDB_SUCCESS || shared.read_only) return found;
  return in_transaction(env, 0, [&](MDB_txn* txn) {
    const int rc = open_named_in(txn, shared, 0);
    if (rc != MDB_NOTFOUND) return rc;
    MDB_envinfo info{};
    if (api().mdb_env_info(env, &info) != MDB_SUCCESS || info.me_last_pgno > 1) return MDB_CORRUPTED;
    return open_named_in(txn, shared, MDB_CREATE);
  });
}

bool is_valid_key(const SharedEnv& env, std::string_view key) {
  return !key.empty() && key.size() <= static_cast<std::size_t>(api().mdb_env_get_maxkeysize(env.env));
}

Totals read_totals(MDB_txn* txn, MDB_dbi meta) {
  return {read_meta(txn, meta, kEntryCountKey), read_meta(txn, meta, kPayloadBytesKey)};
}

int write_totals(MDB_txn* txn, MDB_dbi meta, const Totals& totals) {
  const int rc = write_meta(txn, meta, kEntryCountKey, totals.entries);
  return rc != MDB_SUCCESS ? rc : write_meta(txn, meta, kPayloadBytesKey, totals.payload_bytes);
}

int write_last_eviction(MDB_txn* txn, MDB_dbi meta, std::int64_t now) {
  return write_meta(txn, meta, kLastEvictionKey, static_cast<std::uint64_t>(now));
}

int read_access(MDB_txn* txn, const SharedEnv& env, std::string_view key, AccessRecord* out) {
  MDB_val k = to_val(key);
  MDB_val value;
  const int rc = api().mdb_get(txn, env.access, &k, &value);
  if (rc == MDB_SUCCESS) *out = decode_access(to_view(value)).value_or(AccessRecord{});
  return rc;
}

int write_access(MDB_txn* txn, const SharedEnv& env, std::string_view key, const AccessRecord& record) {
  char bytes[kAccessRecordSize];
  encode_access(record, bytes);
  MDB_val k = to_val(key);
  MDB_val value{sizeof bytes, bytes};
  return api().mdb_put(txn, env.access, &k, &value, 0);
}

int delete_access(MDB_txn* txn, const SharedEnv& env, std::string_view key) {
  MDB_val k = to_val(key);
  const int rc = api().mdb_del(txn, env.access, &k, nullptr);
  return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

int delete_entry(MDB_txn* txn, const SharedEnv& env, std::string_view key, const MDB_val& stored) {
  MDB_val k = to_val(key);
  Totals totals = read_totals(txn, env.meta);
  const std::uint64_t payload = payload_size_of(stored.mv_size);
  int rc = api().mdb_del(txn, env.entries, &k, nullptr);
  if (rc == MDB_SUCCESS) rc = delete_access(txn, env, key);
  if (rc != MDB_SUCCESS) return rc;
  totals.entries = saturating_sub(totals.entries, 1);
  totals.payload_bytes = saturating_sub(totals.payload_bytes, payload);
  return write_totals(txn, env.meta, totals);
}

int add_counter(MDB_txn* txn, MDB_dbi counters, std::string_view name, std::int64_t delta) {
  MDB_val key = to_val(name);
  MDB_val value;
  std::int64_t current = 0;
  if (const int rc = api().mdb_get(txn, counters, &key, &value); rc == MDB_SUCCESS) {
    current = static_cast<std::int64_t>(decode_le64(to_view(value)).value_or(0));
  } else if (rc != MDB_NOTFOUND) {
    return rc;
  }
  char bytes[kCounterRecordSize];
  util::store_le(bytes, static_cast<std::uint64_t>(wrapping_add(current, delta)), 8);
  MDB_val updated{sizeof bytes, bytes};
  return api().mdb_put(txn, counters, &key, &updated, 0);
}

}  // namespace nvrtc_cache::store::lmdb
