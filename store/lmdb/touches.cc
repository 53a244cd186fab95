#include "store/lmdb/touches.h"

#include <mutex>
#include <string>
#include <unordered_set>

#include "store/envelope.h"
#include "store/lmdb/arithmetic.h"
#include "store/lmdb/databases.h"
#include "store/lmdb/library.h"
#include "store/lmdb/transaction.h"

namespace nvrtc_cache::store::lmdb {
namespace {

// A recorded access younger than this is not rewritten.
constexpr std::int64_t kTouchGranularitySeconds = 60;
// Queued touches are written at most this often, or when this many keys are queued.
constexpr std::int64_t kTouchFlushSeconds = 30;
constexpr std::size_t kMaxPendingTouches = 1024;

// Best effort, one transaction: the queued touches of `keys` (see apply_touches).
void write_touches(SharedEnv& env, const std::unordered_set<std::string>& keys, std::int64_t now) {
  if (keys.empty()) return;
  Txn txn(env, 0);
  if (txn.begin_rc() != MDB_SUCCESS) return;
  bool changed = false;
  if (apply_touches(txn.get(), env, keys, now, &changed) == MDB_SUCCESS && changed) txn.commit();
}

}  // namespace

bool touch_due(const std::optional<AccessRecord>& record, std::int64_t now) {
  return !record || seconds_since(now, record->last_access) >= kTouchGranularitySeconds;
}

int apply_touches(MDB_txn* txn, SharedEnv& env, const std::unordered_set<std::string>& keys, std::int64_t now,
                  bool* changed) {
  for (const std::string& key : keys) {
    AccessRecord record;
    const int rc = read_access(txn, env, key, &record);
    if (rc == MDB_SUCCESS) {
      if (!touch_due(record, now)) continue;
    } else if (rc == MDB_NOTFOUND) {
      MDB_val k = to_val(key);
      MDB_val stored;
      if (api().mdb_get(txn, env.entries, &k, &stored) != MDB_SUCCESS) continue;
      record = AccessRecord{payload_size_of(stored.mv_size), now, now};
    } else {
      return rc;
    }
    record.last_access = now;
    if (const int written = write_access(txn, env, key, record); written != MDB_SUCCESS) return written;
    *changed = true;
  }
  return MDB_SUCCESS;
}

std::unordered_set<std::string> take_touches(SharedEnv& env, std::int64_t now) {
  std::unordered_set<std::string> batch;
  std::lock_guard lock(env.touch_mu);
  batch.swap(env.pending_touches);
  env.last_touch_flush = now;
  return batch;
}

void note_touch(SharedEnv& env, std::string_view key, std::int64_t now, bool may_write) {
  std::unordered_set<std::string> batch;
  {
    std::lock_guard lock(env.touch_mu);
    if (env.pending_touches.size() < kMaxPendingTouches) env.pending_touches.emplace(key);
    if (!may_write) return;
    const bool due = env.pending_touches.size() >= kMaxPendingTouches || now < env.last_touch_flush ||
                     seconds_since(now, env.last_touch_flush) >= kTouchFlushSeconds;
    if (!due) return;
    batch.swap(env.pending_touches);
    env.last_touch_flush = now;
  }
  write_touches(env, batch, now);
}

void flush_touches(SharedEnv& env, std::int64_t now) { write_touches(env, take_touches(env, now), now); }

}  // namespace nvrtc_cache::store::lmdb
