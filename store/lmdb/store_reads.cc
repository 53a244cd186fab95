// LmdbStore::Impl's reads: get (with its touch and the drop of a corrupt entry), the totals, the
// counters, the map usage and the walk of every entry.
#include <xxhash.h>

#include "platform/fault_guard.h"
#include "store/lmdb/evicted_keys.h"
#include "store/envelope.h"
#include "store/lmdb/errors.h"
#include "store/lmdb/eviction.h"
#include "store/lmdb/library.h"
#include "store/lmdb/store_impl.h"
#include "store/lmdb/structure_check.h"
#include "store/lmdb/touches.h"
#include "store/lmdb/transaction.h"

namespace nvrtc_cache::store {

using lmdb::api;
using lmdb::EnvRef;
using lmdb::SharedEnv;
using lmdb::to_val;
using lmdb::to_view;
using lmdb::Txn;

namespace {

// The part of a lookup that reads mapped pages, run under the fault guard: plain data only.
struct GuardedLookup {
  MDB_txn* txn;
  MDB_dbi entries, access;
  MDB_val key;
  MDB_val value;
  int rc;
  std::uint64_t touched;  // every byte of the value read once, so later copies cannot fault
  MDB_val access_value;
  int access_rc;
};

void guarded_lookup(void* arg) {
  auto* l = static_cast<GuardedLookup*>(arg);
  l->rc = api().mdb_get(l->txn, l->entries, &l->key, &l->value);
  if (l->rc != MDB_SUCCESS) return;
  l->touched = XXH3_64bits(l->value.mv_data, l->value.mv_size);
  l->access_rc = api().mdb_get(l->txn, l->access, &l->key, &l->access_value);
  if (l->access_rc == MDB_SUCCESS) l->touched ^= XXH3_64bits(l->access_value.mv_data, l->access_value.mv_size);
}

// Whether the entry (key, value) passes its envelope check, read under the fault guard.
bool intact_under_guard(const MDB_val& key, const MDB_val& value) {
  struct Check {
    MDB_val key, value;
    bool intact;
  } check{key, value, false};
  const bool readable = platform::run_guarded(
      [](void* raw) {
        auto* c = static_cast<Check*>(raw);
        c->intact = unwrap_value(to_view(c->key), to_view(c->value)).has_value();
      },
      &check);
  return readable && check.intact;
}

// The access record of `key` (a copy), read under the fault guard; nullopt if absent or malformed.
std::optional<AccessRecord> access_under_guard(MDB_txn* txn, MDB_dbi access, const MDB_val& key) {
  struct Read {
    MDB_txn* txn;
    MDB_dbi dbi;
    MDB_val key;
    std::optional<AccessRecord> record;
  } read{txn, access, key, std::nullopt};
  const bool readable = platform::run_guarded(
      [](void* raw) {
        auto* r = static_cast<Read*>(raw);
        MDB_val value;
        if (api().mdb_get(r->txn, r->dbi, &r->key, &value) == MDB_SUCCESS) r->record = decode_access(to_view(value));
      },
      &read);
  return readable ? read.record : std::nullopt;
}

}  // namespace

std::optional<std::string> LmdbStore::Impl::get(std::string_view key) {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref || !lmdb::is_valid_key(*ref, key)) return std::nullopt;
  if (system().fault_for(platform::StoreOperation::kGet) != 0) return std::nullopt;
  std::optional<std::string> found;
  bool stale = false;
  std::int64_t now = 0;
  {
    Txn txn(*ref, MDB_RDONLY);
    if (txn.begin_rc() != MDB_SUCCESS) {
      if (lmdb::is_corruption(txn.begin_rc())) quarantine_damaged(*ref);
      return std::nullopt;
    }
    GuardedLookup lookup{txn.get(), ref->entries, ref->access, to_val(key), {}, MDB_NOTFOUND, 0, {}, MDB_NOTFOUND};
    if (!platform::run_guarded(&guarded_lookup, &lookup) || lmdb::is_corruption(lookup.rc)) {
      quarantine_damaged(*ref);  // the read transaction is abandoned with the environment
      txn.release();
      return std::nullopt;
    }
    if (lookup.rc != MDB_SUCCESS) return std::nullopt;
    if (const auto payload = unwrap_value(key, to_view(lookup.value))) {
      found.emplace(*payload);
      now = system().now_seconds();
      stale = lmdb::touch_due(
          lookup.access_rc == MDB_SUCCESS ? decode_access(to_view(lookup.access_value)) : std::nullopt, now);
    }
  }
  // A mapping lost meanwhile may have turned the bytes copied after the check into zeros.
  if (ref->lost()) return std::nullopt;
  if (found) {
    if (stale) lmdb::note_touch(*ref, key, now, options.reads_write_touches);
    return found;
  }
  corrupt_dropped.fetch_add(1, std::memory_order_relaxed);
  drop_if_corrupt(*ref, key);
  return std::nullopt;
}

// Best effort: re-checks inside a write transaction, since another process may have replaced it.
// Drops an entry whose envelope failed, but only when the damage is confined to the value's own
// overflow pages (their page header is intact): deleting then frees exactly those pages. A value
// stored inside a leaf page means the leaf itself is damaged, and LMDB rewriting it could overrun
// memory (measured under AddressSanitizer): the whole store is moved aside instead.
void LmdbStore::Impl::drop_if_corrupt(SharedEnv& shared, std::string_view key) {
  {
    Txn txn(shared, 0);
    if (txn.begin_rc() != MDB_SUCCESS) {
      if (lmdb::is_corruption(txn.begin_rc())) quarantine_damaged(shared);
      return;
    }
    MDB_val k = to_val(key);
    MDB_val stored;
    if (api().mdb_get(txn.get(), shared.entries, &k, &stored) != MDB_SUCCESS) return;
    if (unwrap_value(key, to_view(stored))) return;  // replaced meanwhile
    if (lmdb::on_intact_overflow_pages(stored, shared.page_size)) {
      if (lmdb::delete_entry(txn.get(), shared, key, stored) == MDB_SUCCESS) txn.commit();
      return;
    }
  }
  quarantine_damaged(shared);
}

lmdb::Totals LmdbStore::Impl::totals() {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref) return {};
  Txn txn(*ref, MDB_RDONLY);
  if (txn.begin_rc() != MDB_SUCCESS) return {};
  return lmdb::read_totals(txn.get(), ref->meta);
}

// The record of evicted keys is on a mapped page: read under the fault guard.
bool LmdbStore::Impl::was_evicted(std::string_view key) {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref) return false;
  Txn txn(*ref, MDB_RDONLY);
  if (txn.begin_rc() != MDB_SUCCESS) return false;
  struct Read {
    MDB_txn* txn;
    MDB_dbi meta;
    std::string_view key;
    bool evicted = false;
  } read{txn.get(), ref->meta, key};
  const bool readable = platform::run_guarded(
      [](void* arg) {
        auto* r = static_cast<Read*>(arg);
        r->evicted = lmdb::was_evicted(r->txn, r->meta, r->key);
      },
      &read);
  return readable && read.evicted;
}

Counters LmdbStore::Impl::counters() {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref) return {};
  Txn txn(*ref, MDB_RDONLY);
  if (txn.begin_rc() != MDB_SUCCESS) return {};
  MDB_cursor* cursor = nullptr;
  if (api().mdb_cursor_open(txn.get(), ref->counters, &cursor) != MDB_SUCCESS) return {};
  const lmdb::CursorOwner owner = lmdb::own_cursor(cursor);
  Counters result;
  MDB_val key, value;
  for (int rc = api().mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == MDB_SUCCESS;
       rc = api().mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    if (const auto number = decode_le64(to_view(value))) {
      result.emplace(std::string(to_view(key)), static_cast<std::int64_t>(*number));
    }
  }
  if (ref->counter_file) {
    for (const auto& [name, count] : ref->counter_file->read()) result[name] += count;
  }
  return result;
}

MapUsage LmdbStore::Impl::map_usage() {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref) return {};
  Txn txn(*ref, MDB_RDONLY);
  if (txn.begin_rc() != MDB_SUCCESS) return {};
  MapUsage usage;
  if (lmdb::measure_usage(*ref, txn.get(), &usage) != MDB_SUCCESS) return {};
  return usage;
}

Status LmdbStore::Impl::for_each(
    const std::function<void(std::string_view key, std::optional<std::string_view> payload)>& visit) {
  return for_each_entry([&](std::string_view key, std::optional<std::string_view> payload,
                            std::optional<AccessRecord>) { visit(key, payload); },
                        false);
}

Status LmdbStore::Impl::for_each_entry(const EntryVisitor& visit, bool with_access) {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref) return status;
  Txn txn(*ref, MDB_RDONLY);
  if (txn.begin_rc() != MDB_SUCCESS) return lmdb::to_status(txn.begin_rc(), "begin read");
  MDB_cursor* cursor = nullptr;
  if (const int rc = api().mdb_cursor_open(txn.get(), ref->entries, &cursor); rc != MDB_SUCCESS) {
    return lmdb::to_status(rc, "open cursor");
  }
  const lmdb::CursorOwner owner = lmdb::own_cursor(cursor);
  MDB_val key, value;
  int rc = api().mdb_cursor_get(cursor, &key, &value, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = api().mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    std::optional<std::string_view> payload;
    if (intact_under_guard(key, value)) payload = unwrap_value(to_view(key), to_view(value));
    visit(to_view(key), payload, with_access ? access_under_guard(txn.get(), ref->access, key) : std::nullopt);
  }
  return rc == MDB_NOTFOUND ? Status::ok() : lmdb::to_status(rc, "walk entries");
}

Status LmdbStore::Impl::for_each_key_with_prefix(std::string_view prefix, const KeyVisitor& visit) {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref) return status;
  Txn txn(*ref, MDB_RDONLY);
  if (txn.begin_rc() != MDB_SUCCESS) return lmdb::to_status(txn.begin_rc(), "begin read");
  MDB_cursor* cursor = nullptr;
  if (const int rc = api().mdb_cursor_open(txn.get(), ref->entries, &cursor); rc != MDB_SUCCESS) {
    return lmdb::to_status(rc, "open cursor");
  }
  const lmdb::CursorOwner owner = lmdb::own_cursor(cursor);
  MDB_val key{prefix.size(), const_cast<char*>(prefix.data())}, value;
  int rc = api().mdb_cursor_get(cursor, &key, &value, prefix.empty() ? MDB_FIRST : MDB_SET_RANGE);
  for (; rc == MDB_SUCCESS; rc = api().mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    if (!to_view(key).starts_with(prefix)) break;
    visit(to_view(key), value.mv_size, access_under_guard(txn.get(), ref->access, key));
  }
  return rc == MDB_SUCCESS || rc == MDB_NOTFOUND ? Status::ok() : lmdb::to_status(rc, "walk keys");
}

}  // namespace nvrtc_cache::store
