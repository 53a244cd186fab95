#include "store/lmdb/structure_check.h"

#include <mutex>
#include <string_view>

#include "platform/fault_guard.h"
#include "store/lmdb/library.h"
#include "store/lmdb/page_layout.h"
#include "store/lmdb/transaction.h"

namespace nvrtc_cache::store::lmdb {
namespace {

// Plain data only: the walk runs under the fault guard, which leaves it by siglongjmp.
struct WalkState {
  MDB_cursor* cursor;
  std::uint64_t last_page;
  std::uint64_t page_size;
  bool free_list;
  bool check_overflow;
  bool sound;
};

// A value inline in its leaf page passes: only an overflow value has a header of its own.
bool overflow_header_intact(const MDB_val& value, std::uint64_t page_size) {
  const auto start = reinterpret_cast<std::uintptr_t>(value.mv_data);
  if (!on_overflow_pages(start, page_size)) return true;
  const std::string_view header(reinterpret_cast<const char*>(start - kLmdbPageHeaderSize), kLmdbPageHeaderSize);
  return overflow_header_sound(header, value.mv_size, page_size);
}

void walk_tree(void* raw) {
  auto* w = static_cast<WalkState*>(raw);
  const LmdbLibrary& raw_lmdb = *lmdb_library();  // already under the guard
  MDB_val key, value;
  for (int rc = raw_lmdb.mdb_cursor_get(w->cursor, &key, &value, MDB_FIRST); rc != MDB_NOTFOUND;
       rc = raw_lmdb.mdb_cursor_get(w->cursor, &key, &value, MDB_NEXT)) {
    if (rc != MDB_SUCCESS || (w->free_list && !id_list_sound(to_view(value), w->last_page)) ||
        (w->check_overflow && !overflow_header_intact(value, w->page_size))) {
      w->sound = false;
      return;
    }
  }
}

bool walk_sound(SharedEnv& env, MDB_txn* txn, MDB_dbi dbi, std::uint64_t last_page) {
  MDB_cursor* cursor = nullptr;
  if (api().mdb_cursor_open(txn, dbi, &cursor) != MDB_SUCCESS) return false;
  WalkState state{cursor, last_page, env.page_size, dbi == kFreeDbi, dbi == env.entries, true};
  const bool finished = platform::run_guarded(&walk_tree, &state);
  api().mdb_cursor_close(cursor);
  return finished && state.sound;
}

bool walk_every_tree(SharedEnv& env) {
  Txn txn(env, MDB_RDONLY);
  MDB_envinfo info{};
  if (txn.begin_rc() != MDB_SUCCESS || api().mdb_env_info(env.env, &info) != MDB_SUCCESS) return false;
  for (const MDB_dbi dbi : {MDB_dbi{kFreeDbi}, MDB_dbi{kMainDbi}, env.entries, env.access, env.meta, env.counters}) {
    if (!walk_sound(env, txn.get(), dbi, info.me_last_pgno)) return false;
  }
  return true;
}

}  // namespace

bool structure_verified(SharedEnv& env) {
  if (const int state = env.verified.load(std::memory_order_acquire); state != 0) return state > 0;
  std::lock_guard lock(env.verify_mu);
  if (const int state = env.verified.load(std::memory_order_acquire); state != 0) return state > 0;
  const bool sound = walk_every_tree(env);
  env.verified.store(sound ? 1 : -1, std::memory_order_release);
  if (!sound) env.damaged.store(true, std::memory_order_release);
  return sound;
}

bool on_intact_overflow_pages(const MDB_val& value, std::uint64_t page_size) {
  if (!on_overflow_pages(reinterpret_cast<std::uintptr_t>(value.mv_data), page_size)) return false;
  struct Check {
    const MDB_val* value;
    std::uint64_t page_size;
    bool sound;
  } check{&value, page_size, false};
  return platform::run_guarded(
             [](void* raw) {
               auto* c = static_cast<Check*>(raw);
               c->sound = overflow_header_intact(*c->value, c->page_size);
             },
             &check) &&
         check.sound;
}

}  // namespace nvrtc_cache::store::lmdb
