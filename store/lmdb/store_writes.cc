// LmdbStore::Impl's writes: put (with the growth of a growing map, the retry after a full map and
// the automatic eviction), erase, clear, counters and eviction on request.
#include <errno.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "store/envelope.h"
#include "store/lmdb/arithmetic.h"
#include "store/lmdb/errors.h"
#include "store/lmdb/evicted_keys.h"
#include "store/lmdb/eviction.h"
#include "store/lmdb/library.h"
#include "store/lmdb/map_growth.h"
#include "store/lmdb/store_impl.h"
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

// The outcome of one put transaction.
struct PutAttempt {
  int rc = MDB_SUCCESS;
  std::string_view what;
  bool too_large = false;          // above half the map: refused without evicting
  bool unchanged = false;          // the same value was already stored
  bool over_high_water = false;    // map usage after the put is above the high water mark
  std::uint64_t map_bytes = 0;     // the cap (store/lmdb/map_growth.h)
  std::uint64_t mapped_bytes = 0;  // the map's size: below the cap, a growing map may grow

  PutAttempt& failed(int code, std::string_view step) {
    rc = code;
    what = step;
    return *this;
  }
};

// Stores the enveloped value, its access record and the totals in `txn`; the totals account for a
// value it replaces. Sets `attempt.unchanged` (and writes nothing) when the same value is stored.
void write_entry(MDB_txn* txn, const SharedEnv& shared, std::string_view key, std::string_view value, std::int64_t now,
                 PutAttempt& attempt) {
  MDB_val k = to_val(key);
  MDB_val existing;
  lmdb::Totals totals = lmdb::read_totals(txn, shared.meta);
  int rc = api().mdb_get(txn, shared.entries, &k, &existing);
  if (rc == MDB_SUCCESS) {
    if (unwrap_value(key, to_view(existing)) == value) {  // nothing to rewrite
      attempt.unchanged = true;
      return;
    }
    totals.payload_bytes = lmdb::saturating_sub(totals.payload_bytes, payload_size_of(existing.mv_size));
  } else if (rc == MDB_NOTFOUND) {
    ++totals.entries;
  } else {
    attempt.failed(rc, "read before put");
    return;
  }
  MDB_val reserved{wrapped_size(value.size()), nullptr};
  if (rc = api().mdb_put(txn, shared.entries, &k, &reserved, MDB_RESERVE); rc != MDB_SUCCESS) {
    attempt.failed(rc, "put");
    return;
  }
  wrap_value_into(key, value, static_cast<char*>(reserved.mv_data));  // before any other call
  totals.payload_bytes += value.size();
  if (rc = lmdb::write_access(txn, shared, key, AccessRecord{value.size(), now, now}); rc != MDB_SUCCESS) {
    attempt.failed(rc, "write access record");
  } else if (rc = lmdb::write_totals(txn, shared.meta, totals); rc != MDB_SUCCESS) {
    attempt.failed(rc, "update totals");
  }
}

// One write transaction storing (key, value) with its access record and the totals.
PutAttempt put_once(SharedEnv& shared, platform::Env& system, std::string_view key, std::string_view value,
                    std::int64_t now) {
  PutAttempt attempt;
  Txn txn(shared, 0);
  if (txn.begin_rc() != MDB_SUCCESS) return attempt.failed(txn.begin_rc(), "begin write");
  MDB_envinfo info{};
  api().mdb_env_info(shared.env, &info);
  attempt.mapped_bytes = info.me_mapsize;
  attempt.map_bytes = lmdb::cap_bytes(shared, info.me_mapsize);
  if (const int fault = system.fault_for(platform::StoreOperation::kPut); fault != 0)
    return attempt.failed(fault, "put");
  if (wrapped_size(value.size()) > attempt.map_bytes / 2) {
    attempt.rc = MDB_MAP_FULL;
    attempt.too_large = true;
    return attempt;
  }
  write_entry(txn.get(), shared, key, value, now, attempt);
  if (attempt.unchanged || attempt.rc != MDB_SUCCESS) return attempt;
  MapUsage usage;
  if (lmdb::measure_usage(shared, txn.get(), &usage) == MDB_SUCCESS)
    attempt.over_high_water = lmdb::over_high_water(usage);
  if (const int rc = txn.commit(); rc != MDB_SUCCESS) return attempt.failed(rc, "commit put");
  return attempt;
}

// A write that failed for want of space on the disk (ENOSPC, EDQUOT, or EIO — what a full tmpfs
// gives a mapped write — with under 1 MiB left), said as such: the filesystem, what is left of it
// and the store's own message; nullopt for any other failure.
std::optional<Status> full_disk(const lmdb::StoreLocation& location, platform::Env& env, int rc, const Status& status) {
  if (!lmdb::is_out_of_space(rc) && rc != EIO) return std::nullopt;
  const std::optional<std::uint64_t> free = platform::free_bytes_at(env, location.parent.fd());
  if (rc == EIO && (!free || *free >= platform::kFullDiskBytes)) return std::nullopt;
  const std::string left = free ? " (" + std::to_string(*free / 1024) + " KiB free)" : "";
  return Status::full("no space left on the filesystem holding " + location.path + left + ": " + status.message());
}

}  // namespace

Status LmdbStore::Impl::put(std::string_view key, std::string_view value) {
  Status status;
  const EnvRef ref = acquire(&status, /*for_put=*/true);
  if (!ref) return status;
  if (!lmdb::is_valid_key(*ref, key)) return Status::invalid_argument("key size out of range");
  if (value.size() > std::numeric_limits<std::size_t>::max() / 2 - kEnvelopeOverhead) {
    return Status::invalid_argument("value too large");
  }
  const std::int64_t now = system().now_seconds();
  PutAttempt attempt = put_once(*ref, system(), key, value, now);
  // A full map below its cap (a growing map): grow it and retry, while it grows.
  while (attempt.rc == MDB_MAP_FULL && !attempt.too_large && attempt.mapped_bytes < attempt.map_bytes &&
         lmdb::grow_map(*ref, wrapped_size(value.size()) + key.size())) {
    attempt = put_once(*ref, system(), key, value, now);
  }
  // A full map, or a full disk (the file cannot grow; evicted pages are reused without growing it):
  // make room (the value needs contiguous pages) and retry once.
  if ((attempt.rc == MDB_MAP_FULL || attempt.rc == ENOSPC) && !attempt.too_large && attempt.map_bytes > 0) {
    lmdb::make_room(*ref, attempt.map_bytes, wrapped_size(value.size()), key.size(), now);
    attempt = put_once(*ref, system(), key, value, now);
  }
  if (attempt.too_large) {
    return Status::full("value of " + std::to_string(value.size()) + " bytes exceeds half the map size (" +
                        std::to_string(attempt.map_bytes) + " bytes)");
  }
  if (attempt.rc != MDB_SUCCESS) {
    Status failed = lmdb::to_status(attempt.rc, attempt.what);
    if (std::optional<Status> full = full_disk(where(), system(), attempt.rc, failed)) return *full;
    return damaged_or(std::move(failed), *ref, attempt.rc);
  }
  if (attempt.unchanged) lmdb::note_touch(*ref, key, now);
  if (attempt.over_high_water) lmdb::evict_if_over_high_water(*ref, now);
  return Status::ok();
}

Status LmdbStore::Impl::erase(std::string_view key) {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref) return status;
  if (!lmdb::is_valid_key(*ref, key)) return Status::ok();  // such a key can never be stored
  if (const int fault = system().fault_for(platform::StoreOperation::kErase); fault != 0)
    return lmdb::to_status(fault, "erase");
  Txn txn(*ref, 0);
  if (txn.begin_rc() != MDB_SUCCESS) return lmdb::to_status(txn.begin_rc(), "begin write");
  MDB_val k = to_val(key);
  MDB_val stored;
  int rc = api().mdb_get(txn.get(), ref->entries, &k, &stored);
  if (rc == MDB_NOTFOUND) return Status::ok();
  if (rc != MDB_SUCCESS) return lmdb::to_status(rc, "read before erase");
  if (rc = lmdb::delete_entry(txn.get(), *ref, key, stored); rc != MDB_SUCCESS) {
    return damaged_or(lmdb::write_failed(*ref, rc, "erase"), *ref, rc);
  }
  if (rc = txn.commit(); rc != MDB_SUCCESS) return damaged_or(lmdb::write_failed(*ref, rc, "commit erase"), *ref, rc);
  return Status::ok();
}

Status LmdbStore::Impl::clear() {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref) return status;
  Txn txn(*ref, 0);
  if (txn.begin_rc() != MDB_SUCCESS) return lmdb::to_status(txn.begin_rc(), "begin write");
  int rc = api().mdb_drop(txn.get(), ref->entries, 0);
  if (rc == MDB_SUCCESS) rc = api().mdb_drop(txn.get(), ref->access, 0);
  if (rc == MDB_SUCCESS) rc = api().mdb_drop(txn.get(), ref->counters, 0);
  if (rc == MDB_SUCCESS) rc = lmdb::write_totals(txn.get(), ref->meta, lmdb::Totals{});
  if (rc == MDB_SUCCESS) rc = lmdb::forget_evicted(txn.get(), ref->meta);
  if (rc == MDB_SUCCESS) rc = txn.commit();
  if (rc == MDB_SUCCESS && ref->counter_file) ref->counter_file->zero();
  return rc == MDB_SUCCESS ? Status::ok() : lmdb::write_failed(*ref, rc, "clear");
}

Status LmdbStore::Impl::add_counters(const Counters& all_deltas) {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref) return status;
  Counters unfiled;  // what the counters file could not take (no space reserved, or it faulted)
  if (ref->counter_file) {
    for (const auto& [name, delta] : all_deltas) {
      if (!ref->counter_file->add(name, delta)) unfiled.emplace(name, delta);
    }
    if (unfiled.empty()) {
      // The queued touches are written as they would have ridden along (a short-lived process's
      // reads are recorded by its flush at exit), in their own transaction when there are any.
      lmdb::flush_touches(*ref, system().now_seconds());
      return Status::ok();
    }
  }
  const Counters& deltas = ref->counter_file ? unfiled : all_deltas;
  if (deltas.empty()) return Status::ok();
  for (const auto& entry : deltas) {
    if (!lmdb::is_valid_key(*ref, entry.first)) return Status::invalid_argument("bad counter name");
  }
  Txn txn(*ref, 0);
  if (txn.begin_rc() != MDB_SUCCESS) return lmdb::to_status(txn.begin_rc(), "begin write");
  for (const auto& [name, delta] : deltas) {
    if (const int rc = lmdb::add_counter(txn.get(), ref->counters, name, delta); rc != MDB_SUCCESS) {
      return lmdb::write_failed(*ref, rc, "add counter");
    }
  }
  // The queued touches ride along (one commit): a short-lived process's reads are recorded by its
  // statistics flush at exit.
  const std::int64_t now = system().now_seconds();
  bool touched = false;
  if (const int rc = lmdb::apply_touches(txn.get(), *ref, lmdb::take_touches(*ref, now), now, &touched);
      rc != MDB_SUCCESS) {
    return lmdb::write_failed(*ref, rc, "record accesses");
  }
  if (const int rc = txn.commit(); rc != MDB_SUCCESS) return lmdb::write_failed(*ref, rc, "commit counters");
  return Status::ok();
}

Status LmdbStore::Impl::evict(const EvictOptions& evict_options, EvictResult* result, const EvictProgress& progress) {
  Status status;
  const EnvRef ref = acquire(&status);
  if (!ref) return status;
  if (const int fault = system().fault_for(platform::StoreOperation::kEvict); fault != 0)
    return lmdb::to_status(fault, "evict");
  return lmdb::evict(*ref, evict_options, system().now_seconds(), result, progress);
}

}  // namespace nvrtc_cache::store
