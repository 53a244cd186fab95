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
}

EnvRef LmdbStore::Impl::acquire(Status* status) {
  Registry& registry = Registry::instance();
  std::lock_guard lock(registry.mu);
  if (closed) {
    *status = Status::io_error("lmdb store is closed");
    return EnvRef();
  }
  if (env != nullptr && env->belongs_to_this_process() && env->damaged.load(std::memory_order_acquire)) {
    quarantine_damaged(*env);
  }
  if (env != nullptr && env->belongs_to_this_process() && directory_was_replaced(*env)) {
    env->abandoned.store(true, std::memory_order_release);  // another process moved it aside
  }
  if (env != nullptr && !env->belongs_to_this_process()) {
    registry.release_locked(std::exchange(env, nullptr));  // inherited or abandoned: leaked
  }
  if (env == nullptr) env = registry.acquire_locked(options, location, status);
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

bool LmdbStore::Impl::directory_was_replaced(SharedEnv& shared) {
  const std::int64_t now = system().now_seconds();
  if (shared.identity_checked_at.exchange(now) == now) return false;
  return !is_open_directory(shared);
}

bool LmdbStore::Impl::is_open_directory(const SharedEnv& shared) {
  struct stat st {};
  return system().stat_at(location.parent.fd(), location.leaf, &st) == 0 && S_ISDIR(st.st_mode) &&
         platform::file_id(st) == shared.id;
}

void LmdbStore::Impl::quarantine_damaged(SharedEnv& shared) {
  // The zero pages of a lost mapping are not the files' damage: the store opened anew decides.
  if (shared.lost()) return;
  if (shared.abandoned.exchange(true)) return;
  quarantined.fetch_add(1, std::memory_order_relaxed);
  if (is_open_directory(shared)) quarantine(location.parent, location.leaf, system());
  note_counter_file_replaced();  // the fresh store that follows counts in a file of its own
}

Status LmdbStore::Impl::damaged_or(Status status, SharedEnv& shared, int rc) {
  if (lmdb::is_corruption(rc)) quarantine_damaged(shared);
  return status;
}

}  // namespace nvrtc_cache::store
