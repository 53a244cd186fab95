#include "store/lmdb/store_impl.h"

#include "store/counter_file.h"

#include <sys/stat.h>

#include <mutex>
#include <utility>

#include "store/cache_directory.h"
#include "store/lmdb/errors.h"
#include "store/lmdb/touches.h"

namespace nvrtc_cache::store {

using lmdb::EnvRef;
using lmdb::Registry;
using lmdb::SharedEnv;

LmdbStore::Impl::~Impl() {
  if (!location.parent_intact(system())) location.parent.release();  // renumbered: not ours to close
  if (recreated_location && !recreated_location->parent_intact(system())) recreated_location->parent.release();
}

EnvRef LmdbStore::Impl::acquire(Status* status, bool for_put) {
  Registry& registry = Registry::instance();
  std::lock_guard lock(registry.mu);
  if (closed) {
    *status = Status::io_error("lmdb store is closed");
    return EnvRef();
  }
  if (env != nullptr && env->belongs_to_this_process() && env->damaged.load(std::memory_order_acquire)) {
    quarantine_damaged(*env);
  }
  if (env != nullptr && env->belongs_to_this_process() && directory_was_replaced(*env, for_put)) {
    env->abandoned.store(true, std::memory_order_release);  // another process moved it aside
  }
  if (env != nullptr && !env->belongs_to_this_process()) {
    registry.release_locked(std::exchange(env, nullptr));  // inherited or abandoned: leaked
  }
  if (env == nullptr) env = registry.acquire_locked(options, where(), status);
  if (env == nullptr && recreate_removed_directory(status)) env = registry.acquire_locked(options, where(), status);
  if (env == nullptr) return EnvRef();
  ++env->users;
  return EnvRef(env);
}

EnvRef LmdbStore::Impl::acquire_existing() {
  Registry& registry = Registry::instance();
  std::lock_guard lock(registry.mu);
  if (closed || env == nullptr || !env->belongs_to_this_process()) return EnvRef();
  ++env->users;
  return EnvRef(env);
}

void LmdbStore::Impl::release() {
  if (const EnvRef ref = acquire_existing()) lmdb::flush_touches(*ref, system().now_seconds());
  Registry& registry = Registry::instance();
  std::lock_guard lock(registry.mu);
  closed = true;
  if (env != nullptr) registry.release_locked(std::exchange(env, nullptr));
}

bool LmdbStore::Impl::recreate_removed_directory(Status* status) {
  if (recreated_location) return false;  // once: a directory removed again stays removed
  const lmdb::StoreLocation& at = where();
  struct stat st {};
  if (system().stat_at(at.parent.fd(), "", &st) != 0 || !S_ISDIR(st.st_mode) || st.st_nlink != 0) return false;
  const std::string parent_path =
      at.path.size() > at.leaf.size() + 1 ? at.path.substr(0, at.path.size() - at.leaf.size() - 1) : std::string();
  if (parent_path.empty()) return false;
  DirectoryCheck check = prepare_directory(parent_path, options.group_shared, system());
  if (check.verdict != DirectoryVerdict::kUsable) {
    *status = Status::io_error("the cache directory " + parent_path + " was removed and cannot be recreated (" +
                               check.detail + ")");
    return false;
  }
  auto fresh = std::make_unique<lmdb::StoreLocation>();
  if (Status located = lmdb::locate_store(at.path, check.handle.fd(), system(), fresh.get()); !located) {
    *status = located;
    return false;
  }
  recreated_location = std::move(fresh);
  current_location.store(recreated_location.get(), std::memory_order_release);
  recreated.fetch_add(1, std::memory_order_relaxed);
  note_counter_file_replaced();  // the recreated store counts in a file of its own
  return true;
}

bool LmdbStore::Impl::directory_was_replaced(SharedEnv& shared, bool now) {
  const std::int64_t seconds = system().now_seconds();
  if (shared.identity_checked_at.exchange(seconds) == seconds && !now) return false;
  return !is_open_directory(shared);
}

bool LmdbStore::Impl::is_open_directory(const SharedEnv& shared) {
  struct stat st {};
  const lmdb::StoreLocation& at = where();
  return system().stat_at(at.parent.fd(), at.leaf, &st) == 0 && S_ISDIR(st.st_mode) &&
         platform::file_id(st) == shared.id;
}

void LmdbStore::Impl::quarantine_damaged(SharedEnv& shared) {
  // The zero pages of a lost mapping are not the files' damage: the store opened anew decides.
  if (shared.lost()) return;
  if (shared.abandoned.exchange(true)) return;
  quarantined.fetch_add(1, std::memory_order_relaxed);
  if (is_open_directory(shared)) quarantine(where().parent, where().leaf, system());
  note_counter_file_replaced();  // the fresh store that follows counts in a file of its own
}

Status LmdbStore::Impl::damaged_or(Status status, SharedEnv& shared, int rc) {
  if (lmdb::is_corruption(rc)) quarantine_damaged(shared);
  return status;
}

}  // namespace nvrtc_cache::store
