#include "store/lmdb/environment_registry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <utility>

#include "platform/fork_locks.h"
#include "store/lmdb/databases.h"
#include "store/lmdb/errors.h"
#include "store/lmdb/library.h"
#include "store/lmdb/lock_file_volume.h"
#include "store/lmdb/map_growth.h"

namespace nvrtc_cache::store::lmdb {
namespace {

constexpr unsigned kMaxReaders = 1024;
// Every page of a lock file for kMaxReaders (64-byte reader slots after a header of a few cache
// lines), with room to spare.
constexpr off_t kLockFileReserve = 128 * 1024;
static_assert(kLockFileReserve >= kMaxReaders * 64 + 4096);
constexpr MDB_dbi kMaxDbs = 8;
constexpr mdb_mode_t kFileMode = 0600;

// Incremented in every forked child: an environment opened under an older generation belongs to
// an ancestor process and must never be used or closed.
std::atomic<std::uint64_t> g_fork_generation{0};

struct EnvCloser {
  void operator()(MDB_env* env) const { api().mdb_env_close(env); }
};
using EnvHandle = std::unique_ptr<MDB_env, EnvCloser>;

// Created at load, before any thread can be inside its creation. The child renews the mutex and
// moves to a new generation: every environment opened before fork is then foreign to it.
__attribute__((constructor)) void register_fork_locks() {
  (void)Registry::instance();
  platform::join_fork_order(platform::ForkRank::kStoreRegistry,
                            {[] { Registry::instance().mu.lock(); }, [] { Registry::instance().mu.unlock(); },
                             [] {
                               g_fork_generation.fetch_add(1, std::memory_order_acq_rel);
                               platform::renew_in_child(Registry::instance().mu);
                             }});
}

// Creates, configures and opens an environment on `path` with `flags`. Directory mode (data.mdb +
// lock.mdb inside it); never MDB_WRITEMAP.
int open_environment(const LmdbOptions& options, const std::string& path, unsigned flags, std::uint64_t map_bytes,
                     EnvHandle* out) {
  MDB_env* raw = nullptr;
  int rc = api().mdb_env_create(&raw);
  if (rc != MDB_SUCCESS) return rc;
  EnvHandle env(raw);
  install_assert_guard(raw);
  rc = api().mdb_env_set_maxreaders(raw, kMaxReaders);
  if (rc == MDB_SUCCESS) rc = api().mdb_env_set_maxdbs(raw, kMaxDbs);
  if (rc == MDB_SUCCESS) rc = api().mdb_env_set_mapsize(raw, map_bytes);
  if (rc == MDB_SUCCESS)
    rc = api().mdb_env_open(raw, path.c_str(), flags, options.group_shared ? kGroupSharedFileMode : kFileMode);
  if (rc == MDB_SUCCESS) *out = std::move(env);  // a failed open needs a fresh handle: `env` closes it
  return rc;
}

// A group-shared store's files usable by the group whatever the umask LMDB created them under: the
// files this user owns are made kGroupSharedFileMode (another member's are theirs to set). Where no
// owner is reported (Windows) there are no modes to set either.
void share_with_group(const DirectoryHandle& directory, platform::Env& env) {
  for (const char* name : {"data.mdb", "lock.mdb"}) {
    struct stat st {};
    if (env.stat_at(directory.fd(), name, &st) != 0 || !S_ISREG(st.st_mode) ||
        platform::owner_of(st) != platform::Owner::kThisUser) {
      continue;
    }
    if ((st.st_mode & 07777) != kGroupSharedFileMode)
      (void)env.change_mode_at(directory.fd(), name, kGroupSharedFileMode);
  }
}

// The path LMDB is given for `directory`: the one the platform reads from the handle
// (platform::path_naming_directory: /proc/self/fd/N, which resolves to the very directory the handle
// holds, no component can be swapped under it; on Windows the directory's present full path), or
// `fallback` where there is none or it does not resolve to that directory.
std::string lmdb_path_for(const DirectoryHandle& directory, const DirectoryId& id, const std::string& fallback,
                          platform::Env& env) {
  const std::string by_handle = platform::path_naming_directory(directory.fd());
  if (by_handle.empty()) return fallback;
  if (platform::path_naming_directory_is_read_from_it()) return by_handle;
  struct stat st {};
  if (env.stat(by_handle, &st) == 0 && platform::file_id(st) == id) return by_handle;
  return fallback;
}

// Whether the environment LMDB opened at `path` is the store in `directory` (identity `id`): its
// data file is the data.mdb in that directory, and `path` still names it (the path read from the
// handle again: /proc/self/fd/N always does while the handle is open; a Windows full path does if
// the directory has not moved). LMDB's file handle is only queried, never opened again.
bool opened_in_checked_directory(MDB_env* env, const DirectoryHandle& directory, const DirectoryId& id,
                                 const std::string& path, platform::Env& system) {
  mdb_filehandle_t data_file{};
  struct stat opened {
  }, expected{}, at_path{};
  if (api().mdb_env_get_fd(env, &data_file) != MDB_SUCCESS ||
      platform::stat_open_file_in(os_handle(data_file), directory.fd(), "data.mdb", &opened) != 0) {
    return false;
  }
  if (system.stat_at(directory.fd(), "data.mdb", &expected) != 0 || !same_file(opened, expected)) return false;
  if (path == platform::path_naming_directory(directory.fd())) return true;
  return system.stat(path, &at_path) == 0 && platform::file_id(at_path) == id;
}

// data.mdb's size in `directory` (0 when there is none yet): a growing map opens no smaller.
std::uint64_t existing_data_file_bytes(const DirectoryHandle& directory, platform::Env& env) {
  struct stat st {};
  if (env.stat_at(directory.fd(), "data.mdb", &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) return 0;
  return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace

std::uint64_t current_fork_generation() { return g_fork_generation.load(std::memory_order_acquire); }

bool SharedEnv::belongs_to_this_process() const {
  return !abandoned.load(std::memory_order_acquire) && !lost() && generation == current_fork_generation() &&
         pid == ::getpid();
}

Registry& Registry::instance() {
  static Registry* const registry = new Registry;
  return *registry;
}

SharedEnv* Registry::acquire_locked(const LmdbOptions& options, const StoreLocation& location, Status* status) {
  platform::Env& env = *options.env;
  if (!location.parent_intact(env)) {
    *status = Status::io_error("the handle on the directory holding " + location.path +
                               " was closed by someone else; not using the store");
    return nullptr;
  }
  const DirectoryWalk directory = open_subdirectory(location.parent, location.leaf, location.path, /*create=*/true, env,
                                                    options.group_shared ? kGroupSharedDirectoryMode : mode_t{0700});
  if (!directory.handle.valid()) {
    *status =
        directory.unsafe ? Status::invalid_argument(directory.detail) : classified(directory.error, directory.detail);
    return nullptr;
  }
  struct stat st {};
  if (const int error = env.stat_at(directory.handle.fd(), "", &st); error != 0) {
    *status = to_status(error, "stat " + location.path);
    return nullptr;
  }
  const DirectoryId id = platform::file_id(st);
  if (const auto found = live_.find(id); found != live_.end() && found->second->belongs_to_this_process()) {
    ++found->second->users;
    return found->second;
  }
  return open_locked(options, location, directory.handle, id, status);
}

void Registry::release_locked(SharedEnv* env) {
  if (--env->users > 0) return;
  if (const auto found = live_.find(env->id); found != live_.end() && found->second == env) {
    live_.erase(found);
  }
  // A handle inherited across fork is leaked, not closed: the ancestor still owns its mapping,
  // file descriptors and locks. An abandoned (damaged) one is leaked too.
  if (env->belongs_to_this_process()) {
    api().mdb_env_close(env->env);
    delete env;
  } else if (env->pid == ::getpid() && env->generation == g_fork_generation.load()) {
    abandoned_.push_back(env);  // damaged: its mapping stays alive (other threads), never reused
  } else {
    delete env;
  }
}

SharedEnv* Registry::open_locked(const LmdbOptions& options, const StoreLocation& location,
                                 const DirectoryHandle& directory, const DirectoryId& id, Status* status) {
  auto shared = std::make_unique<SharedEnv>();
  shared->id = id;
  shared->cap_bytes = options.map_size_bytes;
  // MDB_NOTLS because read transactions are per call and may run on any thread. A directory that
  // is not writable is opened read-only (serve what is there, store nothing); on read-only media
  // (a cache baked into an image) not even the lock file is writable, and no process can be
  // writing, so no lock is needed.
  // LMDB opens by path: it is given one that resolves to the checked directory, and what it opened is
  // compared with that directory afterwards (a swap between the check and the open is refused).
  const std::string lmdb_path = lmdb_path_for(directory, id, location.path, *options.env);
  // A growing map (map_growth.h) opens at data.mdb's size at least: on Windows a smaller map would
  // truncate a file that other processes map.
  const std::uint64_t map_bytes = map_bytes_at_open(options, existing_data_file_bytes(directory, *options.env));
  // LMDB writes its lock file (the reader table and its mutexes) through a shared mapping of a file
  // it sizes with ftruncate: a hole, whose first write faults (SIGBUS) on a full filesystem. Its
  // blocks are reserved before LMDB opens it (the size left to LMDB); a store whose lock file cannot
  // have them is not used. (Read-only media and directories fail here with other errors: LMDB's own
  // open then decides, as before.)
  if (const int reserve_rc = options.env->reserve_file_at(
          directory.fd(), "lock.mdb", options.group_shared ? kGroupSharedFileMode : kFileMode, kLockFileReserve);
      is_out_of_space(reserve_rc)) {
    *status = Status::io_error(options.directory +
                               ": no space for LMDB's lock file (the filesystem is full); not using the store");
    return nullptr;
  }
  EnvHandle env;
  int rc = MDB_SUCCESS;
  const LockFileVolumeHint volume_hint(id.device);  // the lock file is in this directory: its volume
  for (const unsigned flags : {MDB_NOTLS, MDB_NOTLS | MDB_RDONLY, MDB_NOTLS | MDB_RDONLY | MDB_NOLOCK}) {
    rc = open_environment(options, lmdb_path, flags, map_bytes, &env);
    shared->read_only = (flags & MDB_RDONLY) != 0;
    if (!is_permission_error(rc)) break;
  }
  if (rc != MDB_SUCCESS) {
    *status = to_status(rc, "mdb_env_open " + options.directory);
    return nullptr;
  }
  MDB_env* raw = env.get();
  if (!opened_in_checked_directory(raw, directory, id, lmdb_path, *options.env)) {
    *status = Status::io_error(options.directory +
                               " was replaced while it was being opened (LMDB's files are not in the directory "
                               "that was checked); not using it");
    return nullptr;
  }
  if (options.group_shared && !shared->read_only) share_with_group(directory, *options.env);
  {
    // Unusable: the counters go to the "counters" database. Read-only: read, never counted into.
    std::string problem;
    shared->counter_file = CounterFile::open(lmdb_path, !shared->read_only, options.group_shared, &problem);
  }
  if (rc = open_databases(raw, *shared); rc != MDB_SUCCESS) {
    *status = to_status(rc, "open databases in " + options.directory);
    return nullptr;
  }
  MDB_stat stat{};
  if (api().mdb_env_stat(raw, &stat) == MDB_SUCCESS && stat.ms_psize > 0) shared->page_size = stat.ms_psize;
  int dead_readers = 0;
  api().mdb_reader_check(raw, &dead_readers);  // release slots pinned by killed processes

  shared->last_touch_flush = options.env->now_seconds();   // a process's first reads write nothing
  shared->identity_checked_at = shared->last_touch_flush;  // it was just opened by handle
  live_[id] = shared.get();                                // may throw: `env` then closes the new environment
  shared->env = env.release();
  shared->users = 1;
  return shared.release();
}

EnvRef::~EnvRef() {
  if (env_ == nullptr) return;
  Registry& registry = Registry::instance();
  std::lock_guard lock(registry.mu);
  registry.release_locked(env_);
}

}  // namespace nvrtc_cache::store::lmdb
