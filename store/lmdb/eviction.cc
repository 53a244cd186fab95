#include "store/lmdb/eviction.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "store/envelope.h"
#include "store/lmdb/arithmetic.h"
#include "store/lmdb/databases.h"
#include "store/lmdb/errors.h"
#include "store/lmdb/evicted_keys.h"
#include "store/lmdb/library.h"
#include "store/lmdb/map_growth.h"
#include "store/lmdb/page_layout.h"
#include "store/lmdb/touches.h"
#include "store/lmdb/transaction.h"

namespace nvrtc_cache::store::lmdb {
namespace {

// Above kHighWater percent of the map in use after a put, evict down to kLowWater.
constexpr std::uint64_t kHighWaterPercent = 75;
constexpr std::uint64_t kLowWaterPercent = 60;
constexpr int kEvictBatch = 64;  // deletions per write transaction
constexpr int kEvictRounds = 4;  // rescans when the goal is still unmet after a pass

// What one eviction run aims for; every entry last accessed before `accessed_before` goes, then
// least recently accessed entries go until both size goals hold.
struct EvictGoal {
  std::optional<std::uint64_t> max_used_bytes;     // map usage
  std::optional<std::uint64_t> max_payload_bytes;  // the payload total (size_bytes())
  std::optional<std::int64_t> accessed_before;
  bool automatic = false;  // max_used_bytes = low water, and only if above the high water mark
  // After MDB_MAP_FULL: a record of this many bytes must fit. The free pages may be enough but too
  // fragmented for it, so eviction goes on at least until twice its size is freed, and the two
  // least recently used entries at least as large go first, whatever the usage (each frees a run
  // of contiguous pages long enough).
  std::optional<std::uint64_t> record_bytes;

  bool has_size_goal() const { return max_used_bytes.has_value() || max_payload_bytes.has_value(); }
  bool sizes_met(const MapUsage& usage, const Totals& totals) const {
    return (!max_used_bytes || usage.used_bytes <= *max_used_bytes) &&
           (!max_payload_bytes || totals.payload_bytes <= *max_payload_bytes);
  }
};

// An entry (or an orphaned access record) in eviction order, as of the scan.
struct Candidate {
  std::int64_t last_access = 0;
  std::string key;
  std::uint64_t stored_bytes = 0;  // 0 for an access record without an entry
};

// The contiguous pages a value of `bytes` takes outside its leaf page (saturating: sizes come from
// the store).
std::uint64_t overflow_pages_of(std::uint64_t bytes, std::uint64_t page_size) {
  return overflow_pages(bytes, page_size).value_or(std::numeric_limits<std::uint64_t>::max());
}

// The map usage to evict down to so that a record of `record_bytes` should fit.
std::uint64_t room_for(std::uint64_t map_bytes, std::uint64_t record_bytes, std::uint64_t page_size) {
  const std::uint64_t needed = 2 * (record_bytes + 4 * page_size);
  return std::min(percent_of(map_bytes, kLowWaterPercent), saturating_sub(map_bytes, needed));
}

// Fixes the size goals from the current usage; `*nothing_to_do` when they already hold.
Status settle_goal(SharedEnv& env, EvictGoal* goal, bool* nothing_to_do) {
  Txn txn(env, MDB_RDONLY);
  if (txn.begin_rc() != MDB_SUCCESS) return to_status(txn.begin_rc(), "begin read");
  MapUsage usage;
  if (const int rc = measure_usage(env, txn.get(), &usage); rc != MDB_SUCCESS) {
    return to_status(rc, "measure map usage");
  }
  *nothing_to_do = true;
  if (goal->automatic) {
    if (!over_high_water(usage)) return Status::ok();
    goal->max_used_bytes = percent_of(usage.map_bytes, kLowWaterPercent);
  }
  if (goal->record_bytes) {
    goal->max_used_bytes = std::min(goal->max_used_bytes.value_or(usage.used_bytes),
                                    saturating_sub(usage.used_bytes, 2 * *goal->record_bytes));
  }
  *nothing_to_do = !goal->accessed_before && goal->sizes_met(usage, read_totals(txn.get(), env.meta));
  return Status::ok();
}

// Every entry with its last access (the oldest possible for one without an access record), and
// every access record without an entry, by a merge of the two databases (both in key order).
int collect_candidates(SharedEnv& env, std::vector<Candidate>* out) {
  constexpr std::int64_t kOldest = std::numeric_limits<std::int64_t>::min();
  Txn txn(env, MDB_RDONLY);
  if (txn.begin_rc() != MDB_SUCCESS) return txn.begin_rc();
  MDB_cursor* raw_entries = nullptr;
  MDB_cursor* raw_access = nullptr;
  if (const int rc = api().mdb_cursor_open(txn.get(), env.entries, &raw_entries); rc != MDB_SUCCESS) return rc;
  const CursorOwner entries = own_cursor(raw_entries);
  if (const int rc = api().mdb_cursor_open(txn.get(), env.access, &raw_access); rc != MDB_SUCCESS) return rc;
  const CursorOwner access = own_cursor(raw_access);
  MDB_val entry_key, entry_value, access_key, access_value;
  int entry_rc = api().mdb_cursor_get(entries.get(), &entry_key, &entry_value, MDB_FIRST);
  int access_rc = api().mdb_cursor_get(access.get(), &access_key, &access_value, MDB_FIRST);
  while (entry_rc == MDB_SUCCESS || access_rc == MDB_SUCCESS) {
    const int order = entry_rc != MDB_SUCCESS    ? 1
                      : access_rc != MDB_SUCCESS ? -1
                                                 : to_view(entry_key).compare(to_view(access_key));
    if (order > 0) {  // an access record without an entry
      out->push_back({kOldest, std::string(to_view(access_key)), 0});
      access_rc = api().mdb_cursor_get(access.get(), &access_key, &access_value, MDB_NEXT);
      continue;
    }
    std::int64_t last_access = kOldest;
    if (order == 0) {
      last_access = decode_access(to_view(access_value)).value_or(AccessRecord{}).last_access;
      access_rc = api().mdb_cursor_get(access.get(), &access_key, &access_value, MDB_NEXT);
    }
    out->push_back({last_access, std::string(to_view(entry_key)), entry_value.mv_size});
    entry_rc = api().mdb_cursor_get(entries.get(), &entry_key, &entry_value, MDB_NEXT);
  }
  if (entry_rc != MDB_NOTFOUND) return entry_rc;
  return access_rc == MDB_NOTFOUND ? MDB_SUCCESS : access_rc;
}

// Sorts least recently accessed first; on the first round after MDB_MAP_FULL, moves up to two
// entries large enough for the record to the front (keeping LRU order). Returns how many were
// moved: they go whatever the size goals.
std::size_t order_candidates(std::vector<Candidate>& candidates, const EvictGoal& goal, int round,
                             std::uint64_t page_size) {
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.last_access != b.last_access ? a.last_access < b.last_access : a.key < b.key;
  });
  std::size_t forced = 0;
  const std::uint64_t run_needed = goal.record_bytes ? overflow_pages_of(*goal.record_bytes, page_size) : 0;
  for (std::size_t i = 0; goal.record_bytes && round == 0 && forced < 2 && i < candidates.size(); ++i) {
    if (overflow_pages_of(candidates[i].stored_bytes, page_size) < run_needed) continue;
    const auto at = candidates.begin() + static_cast<std::ptrdiff_t>(i);
    std::rotate(candidates.begin() + static_cast<std::ptrdiff_t>(forced), at, at + 1);
    ++forced;
  }
  return forced;
}

int evict_one(MDB_txn* txn, const SharedEnv& env, const Candidate& candidate, EvictResult* batch,
              std::vector<std::string>* evicted, bool* changed) {
  AccessRecord record;
  const int access_rc = read_access(txn, env, candidate.key, &record);
  if (access_rc != MDB_SUCCESS && access_rc != MDB_NOTFOUND) return access_rc;
  MDB_val k = to_val(candidate.key);
  MDB_val stored;
  int rc = api().mdb_get(txn, env.entries, &k, &stored);
  if (rc == MDB_NOTFOUND) {  // gone since the scan, or an orphaned access record
    if (access_rc != MDB_SUCCESS) return MDB_SUCCESS;
    *changed = true;
    return delete_access(txn, env, candidate.key);
  }
  if (rc != MDB_SUCCESS) return rc;
  if (access_rc == MDB_SUCCESS && record.last_access > candidate.last_access) return MDB_SUCCESS;  // touched
  const std::uint64_t payload = payload_size_of(stored.mv_size);
  if (rc = delete_entry(txn, env, candidate.key, stored); rc != MDB_SUCCESS) return rc;
  *changed = true;
  ++batch->entries;
  batch->bytes += payload;
  evicted->push_back(candidate.key);
  return MDB_SUCCESS;
}

// One write transaction deleting up to kEvictBatch candidates from `*next` on; sets `*met` when the
// goal holds (the first `forced` candidates go regardless). Each candidate is re-checked: one
// touched since the scan, or gone, is skipped.
Status evict_batch(SharedEnv& env, const EvictGoal& goal, const std::vector<Candidate>& candidates, std::size_t forced,
                   std::size_t* next, bool* met, EvictResult* result) {
  Txn txn(env, 0);
  if (txn.begin_rc() != MDB_SUCCESS) return to_status(txn.begin_rc(), "begin eviction");
  EvictResult batch;
  std::vector<std::string> evicted;  // remembered, so that their next miss says so (evicted_keys.h)
  bool changed = false;
  for (int processed = 0; *next < candidates.size() && processed < kEvictBatch; ++*next, ++processed) {
    const Candidate& candidate = candidates[*next];
    const bool old = goal.accessed_before && candidate.last_access < *goal.accessed_before;
    if (*next >= forced && !old) {
      MapUsage usage;
      if (const int rc = measure_usage(env, txn.get(), &usage); rc != MDB_SUCCESS) {
        return to_status(rc, "measure map usage");
      }
      if (!goal.has_size_goal() || goal.sizes_met(usage, read_totals(txn.get(), env.meta))) {
        *met = true;
        break;
      }
    }
    if (const int rc = evict_one(txn.get(), env, candidate, &batch, &evicted, &changed); rc != MDB_SUCCESS) {
      return write_failed(env, rc, "evict");
    }
  }
  if (!changed) return Status::ok();
  if (const int rc = remember_evicted(txn.get(), env.meta, evicted); rc != MDB_SUCCESS) {
    return write_failed(env, rc, "remember evicted keys");
  }
  if (const int rc = txn.commit(); rc != MDB_SUCCESS) return write_failed(env, rc, "commit eviction");
  result->entries += batch.entries;
  result->bytes += batch.bytes;
  if (env.counter_file) {  // the statistics: every eviction, automatic or asked for, by any process
    env.counter_file->add("evictions", static_cast<std::int64_t>(batch.entries));
    env.counter_file->add("evicted_bytes", static_cast<std::int64_t>(batch.bytes));
  }
  return Status::ok();
}

// Evicts towards `goal`; the caller holds env.evict_mu and no transaction. `result` accumulates
// what was committed.
Status run_eviction(SharedEnv& env, EvictGoal goal, std::int64_t now, EvictResult* result,
                    const EvictProgress* progress = nullptr) {
  int dead_readers = 0;
  api().mdb_reader_check(env.env, &dead_readers);
  flush_touches(env, now);
  bool nothing_to_do = false;
  if (Status settled = settle_goal(env, &goal, &nothing_to_do); !settled || nothing_to_do) return settled;
  const std::uint64_t evicted_before = result->entries;
  Status outcome = Status::ok();
  for (int round = 0; round < kEvictRounds; ++round) {
    std::vector<Candidate> candidates;
    if (const int rc = collect_candidates(env, &candidates); rc != MDB_SUCCESS) {
      outcome = to_status(rc, "scan for eviction");
      break;
    }
    const std::size_t forced = order_candidates(candidates, goal, round, env.page_size);
    bool met = false;
    const std::uint64_t evicted_at_round_start = result->entries;
    for (std::size_t next = 0; next < candidates.size() && !met && outcome;) {
      outcome = evict_batch(env, goal, candidates, forced, &next, &met, result);
      if (progress != nullptr && *progress) (*progress)(met ? candidates.size() : next, candidates.size());
    }
    if (met || !outcome || !goal.has_size_goal() || result->entries == evicted_at_round_start) break;
  }
  if (result->entries > evicted_before) {
    // One more commit, so that the next writer may reuse the pages freed above (LMDB reuses a
    // transaction's freed pages only from the second transaction after it).
    Txn txn(env, 0);
    if (txn.begin_rc() == MDB_SUCCESS && write_last_eviction(txn.get(), env.meta, now) == MDB_SUCCESS) {
      txn.commit();
    }
  }
  return outcome;
}

}  // namespace

int measure_usage(const SharedEnv& env, MDB_txn* txn, MapUsage* out) {
  MDB_envinfo info{};
  if (const int rc = api().mdb_env_info(env.env, &info); rc != MDB_SUCCESS) return rc;
  std::uint64_t pages = kMetaPages;
  for (const MDB_dbi dbi : {MDB_dbi{kFreeDbi}, MDB_dbi{kMainDbi}, env.entries, env.counters, env.meta, env.access}) {
    MDB_stat stat{};
    if (const int rc = api().mdb_stat(txn, dbi, &stat); rc != MDB_SUCCESS) return rc;
    pages += stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages;
  }
  out->used_bytes = pages * env.page_size;
  out->map_bytes = cap_bytes(env, info.me_mapsize);
  out->mapped_bytes = info.me_mapsize;
  return MDB_SUCCESS;
}

bool over_high_water(const MapUsage& usage) {
  return usage.used_bytes > percent_of(usage.map_bytes, kHighWaterPercent);
}

Status evict(SharedEnv& env, const EvictOptions& options, std::int64_t now, EvictResult* result,
             const EvictProgress& progress) {
  EvictGoal goal;
  if (options.older_than_seconds) {
    if (*options.older_than_seconds < 0) return Status::invalid_argument("negative age");
    goal.accessed_before = seconds_before(now, *options.older_than_seconds);
  }
  goal.max_payload_bytes = options.max_bytes;
  goal.automatic = !goal.accessed_before && !goal.max_payload_bytes;
  std::lock_guard evicting(env.evict_mu);
  return run_eviction(env, goal, now, result, &progress);
}

void make_room(SharedEnv& env, std::uint64_t map_bytes, std::uint64_t record_bytes, std::uint64_t key_bytes,
               std::int64_t now) {
  int dead_readers = 0;
  api().mdb_reader_check(env.env, &dead_readers);
  EvictGoal goal;
  goal.max_used_bytes = room_for(map_bytes, record_bytes + key_bytes, env.page_size);
  goal.record_bytes = record_bytes;
  std::lock_guard evicting(env.evict_mu);
  EvictResult ignored;
  (void)run_eviction(env, goal, now, &ignored);  // best effort: the put that follows reports a full map
}

void evict_if_over_high_water(SharedEnv& env, std::int64_t now) {
  try {
    std::unique_lock evicting(env.evict_mu, std::try_to_lock);
    if (!evicting.owns_lock()) return;
    EvictGoal goal;
    goal.automatic = true;
    EvictResult ignored;
    (void)run_eviction(env, goal, now, &ignored);  // automatic: the next put tries again
  } catch (...) {
  }
}

}  // namespace nvrtc_cache::store::lmdb
