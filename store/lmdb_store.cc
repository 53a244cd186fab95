#include "store/lmdb_store.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <xxhash.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <compare>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <unordered_set>
#include <utility>
#include <vector>

#include "store/cache_directory.h"
#include "store/directory_handle.h"
#include "store/envelope.h"
#include "store/fault_guard.h"
#include "store/fork_locks.h"
#include "store/lmdb_library.h"
#include "store/lmdb_records.h"

namespace nvrtc_cache::store {
namespace {

// Only reached after LmdbStore::open verified that the library loaded.
const LmdbLibrary& lmdb() { return *guarded_lmdb_library(); }

constexpr unsigned kMaxReaders = 1024;
constexpr MDB_dbi kMaxDbs = 8;
constexpr mdb_mode_t kFileMode = 0600;
constexpr const char* kEntriesDb = "entries";
constexpr const char* kCountersDb = "counters";
constexpr const char* kMetaDb = "meta";
constexpr const char* kAccessDb = "access";
constexpr std::string_view kEntryCountKey = "entry_count";
constexpr std::string_view kPayloadBytesKey = "payload_bytes";
constexpr std::string_view kLastEvictionKey = "last_eviction";

// LMDB's reserved databases: the free-page list and the main database (names of the others).
constexpr MDB_dbi kFreeDbi = 0;
constexpr MDB_dbi kMainDbi = 1;
constexpr std::uint64_t kMetaPages = 2;

// Eviction: above kHighWater percent of the map in use after a put, evict down to kLowWater.
constexpr std::uint64_t kHighWaterPercent = 75;
constexpr std::uint64_t kLowWaterPercent = 60;
constexpr int kEvictBatch = 64;   // deletions per write transaction
constexpr int kEvictRounds = 4;   // rescans when the goal is still unmet after a pass
// Touches: a recorded access younger than this is not rewritten.
constexpr std::int64_t kTouchGranularitySeconds = 60;
// Queued touches are written at most this often, or when this many keys are queued.
constexpr std::int64_t kTouchFlushSeconds = 30;
constexpr std::size_t kMaxPendingTouches = 1024;

// Restores errno on scope exit: the store runs inside host processes that may inspect errno.
class ErrnoGuard {
 public:
  ErrnoGuard() : saved_(errno) {}
  ~ErrnoGuard() { errno = saved_; }
  ErrnoGuard(const ErrnoGuard&) = delete;
  ErrnoGuard& operator=(const ErrnoGuard&) = delete;

 private:
  int saved_;
};

// ---- Byte helpers ---------------------------------------------------------------------------

MDB_val to_val(std::string_view bytes) {
  return MDB_val{bytes.size(), const_cast<char*>(bytes.data())};
}

std::string_view to_view(const MDB_val& val) {
  return {static_cast<const char*>(val.mv_data), val.mv_size};
}

std::uint64_t saturating_sub(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; }

// ---- Errors ---------------------------------------------------------------------------------

std::string describe(int rc) {
  if (rc >= MDB_KEYEXIST && rc <= MDB_LAST_ERRCODE) return lmdb().mdb_strerror(rc);
  char buffer[128];
  return strerror_r(rc, buffer, sizeof buffer);  // GNU variant: returns the message
}

Status to_status(int rc, std::string_view what) {
  std::string message = std::string(what) + ": " + describe(rc);
  switch (rc) {
    case MDB_MAP_FULL:
    case MDB_TXN_FULL:
      return Status::full(std::move(message));
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
      return Status::corruption(std::move(message));
    case EACCES:
    case EPERM:
    case EROFS:
      return Status::read_only(std::move(message));
    default:
      return Status::io_error(std::move(message));
  }
}

void set_status(Status* out, Status value) {
  if (out != nullptr) *out = std::move(value);
}

// ---- Directory ------------------------------------------------------------------------------

struct DirectoryId {
  dev_t device = 0;
  ino_t inode = 0;
  auto operator<=>(const DirectoryId&) const = default;
};

// Where a store lives: its directory `leaf`, reached through a handle on the directory holding it.
struct StoreLocation {
  DirectoryHandle parent;
  DirectoryId parent_id;
  std::string leaf;
  std::string path;  // for messages, and for LMDB when /proc is missing

  // Whether `parent` still holds the directory it was opened on: a host that closes descriptors it
  // does not own (a daemon's close-all loop) may have renumbered it to a file of its own.
  bool parent_intact(Env& env) const {
    struct stat st {};
    return parent.valid() && env.stat_at(parent.fd(), "", &st) == 0 && S_ISDIR(st.st_mode) &&
           DirectoryId{st.st_dev, st.st_ino} == parent_id;
  }
};

// `path` split into its parent (walked and created as store/directory_handle.h describes, unless
// `parent_fd` already holds it) and its last component.
Status locate_store(const std::string& path, int parent_fd, Env& env, StoreLocation* out) {
  std::string trimmed = path;  // without trailing "/" and "/." (other spellings of the same directory)
  while (trimmed.size() > 1 && (trimmed.back() == '/' || trimmed.ends_with("/."))) trimmed.pop_back();
  const std::size_t slash = trimmed.find_last_of('/');
  out->leaf = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  out->path = path;
  if (out->leaf.empty() || out->leaf == "." || out->leaf == ".." || out->leaf == "/") {
    return Status::invalid_argument("the store directory '" + path + "' has no name of its own");
  }
  if (parent_fd >= 0) {
    out->parent = DirectoryHandle(::fcntl(parent_fd, F_DUPFD_CLOEXEC, 0));
    if (!out->parent.valid()) return to_status(errno, "dup the handle on " + path + "'s parent");
  } else {
    const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : trimmed.substr(0, slash);
    DirectoryWalk walk = open_directory_path(parent, /*create=*/true, /*allow_shared=*/false, env);
    if (!walk.handle.valid()) {
      return walk.unsafe ? Status::invalid_argument(walk.detail) : to_status(walk.error, walk.detail);
    }
    out->parent = std::move(walk.handle);
  }
  struct stat st {};
  if (const int error = env.stat_at(out->parent.fd(), "", &st); error != 0) {
    return to_status(error, "stat the parent of " + path);
  }
  out->parent_id = DirectoryId{st.st_dev, st.st_ino};
  return Status::ok();
}

// ---- Process-wide environment registry ------------------------------------------------------

// Incremented in every forked child: an environment opened under an older generation belongs to
// an ancestor process and must never be used or closed.
std::atomic<std::uint64_t> g_fork_generation{0};

// One open LMDB environment, shared by every LmdbStore of this process on the same directory.
struct SharedEnv {
  MDB_env* env = nullptr;
  MDB_dbi entries = 0;
  MDB_dbi counters = 0;
  MDB_dbi meta = 0;
  MDB_dbi access = 0;
  std::uint64_t page_size = 4096;
  DirectoryId id;
  std::uint64_t generation = g_fork_generation.load(std::memory_order_acquire);
  pid_t pid = ::getpid();
  std::size_t users = 0;  // guarded by Registry::mu
  // Shared by every transaction of this process; exclusive to adopt another process's map size.
  std::shared_mutex remap_mu;
  // Held by the one evictor of this process (never while a transaction of the thread is open).
  std::mutex evict_mu;
  // Keys read whose access record is stale, written in batches (see flush_touches).
  std::mutex touch_mu;
  std::unordered_set<std::string> pending_touches;  // guarded by touch_mu
  // Guarded by touch_mu; clock of the flusher. Starts at the open: a process's first reads queue
  // their touches instead of writing them (no write, hence no commit, on a fresh process's hits).
  std::int64_t last_touch_flush = 0;
  bool read_only = false;  // opened MDB_RDONLY: the directory or files are not writable
  // Set when the store was found damaged (and moved aside) or replaced by another process: the
  // environment is never used again, and leaked rather than closed under other threads.
  std::atomic<bool> abandoned{false};
  std::atomic<bool> damaged{false};  // a write path met damage; the next acquire quarantines
  std::mutex verify_mu;
  std::atomic<int> verified{0};       // 0 not yet, 1 sound, -1 damaged (see structure_verified)
  std::atomic<std::int64_t> identity_checked_at{0};

  bool belongs_to_this_process() const {
    return !abandoned.load(std::memory_order_acquire) &&
           generation == g_fork_generation.load(std::memory_order_acquire) && pid == ::getpid();
  }
};

bool is_corruption(int rc) {
  return rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH;
}

struct EnvCloser {
  void operator()(MDB_env* env) const { lmdb().mdb_env_close(env); }
};
using EnvHandle = std::unique_ptr<MDB_env, EnvCloser>;

// Owns the map from directory identity to the live environment. Everything is guarded by `mu`,
// ForkRank::kStoreRegistry of the fork order (store/fork_locks.h): held across fork() so that a
// child never inherits it locked.
class Registry {
 public:
  static Registry& instance();

  // Returns the environment for the store at `location` with one more user, opening it if needed.
  SharedEnv* acquire_locked(const LmdbOptions& options, const StoreLocation& location, Status* status);
  // Drops one user; the last one closes the environment (or leaks it if inherited across fork).
  void release_locked(SharedEnv* env);

  std::mutex mu;

 private:
  SharedEnv* open_locked(const LmdbOptions& options, const StoreLocation& location, const DirectoryHandle& directory,
                         const DirectoryId& id, Status* status);

  // The environment in use for each directory; an entry inherited across fork is replaced on the
  // next open and erased when its last user goes.
  std::map<DirectoryId, SharedEnv*> live_;
  // Environments abandoned as damaged in this process: kept, never closed (a few KiB each).
  std::vector<SharedEnv*> abandoned_;
};

Registry& Registry::instance() {
  // Leaked on purpose: other threads may still use stores while static destructors run.
  static Registry* const registry = new Registry;
  return *registry;
}

// Created at load, before any thread can be inside its creation. The child renews the mutex and
// moves to a new generation: every environment opened before fork is then foreign to it.
__attribute__((constructor)) void register_fork_locks() {
  (void)Registry::instance();
  join_fork_order(ForkRank::kStoreRegistry, {[] { Registry::instance().mu.lock(); },
                                             [] { Registry::instance().mu.unlock(); },
                                             [] {
                                               g_fork_generation.fetch_add(1, std::memory_order_acq_rel);
                                               renew_in_child(Registry::instance().mu);
                                             }});
}

SharedEnv* Registry::acquire_locked(const LmdbOptions& options, const StoreLocation& location, Status* status) {
  Env& env = *options.env;
  if (!location.parent_intact(env)) {
    *status = Status::io_error("the handle on the directory holding " + location.path +
                               " was closed by someone else; not using the store");
    return nullptr;
  }
  const DirectoryWalk directory = open_subdirectory(location.parent, location.leaf, location.path, /*create=*/true, env);
  if (!directory.handle.valid()) {
    *status = directory.unsafe ? Status::invalid_argument(directory.detail) : to_status(directory.error, directory.detail);
    return nullptr;
  }
  struct stat st {};
  if (const int error = env.stat_at(directory.handle.fd(), "", &st); error != 0) {
    *status = to_status(error, "stat " + location.path);
    return nullptr;
  }
  const DirectoryId id{st.st_dev, st.st_ino};
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
    lmdb().mdb_env_close(env->env);
    delete env;
  } else if (env->pid == ::getpid() && env->generation == g_fork_generation.load()) {
    abandoned_.push_back(env);  // damaged: its mapping stays alive (other threads), never reused
  } else {
    delete env;
  }
}

int open_named_databases(MDB_txn* txn, unsigned flags, SharedEnv& shared) {
  int rc = lmdb().mdb_dbi_open(txn, kEntriesDb, flags, &shared.entries);
  if (rc == MDB_SUCCESS) rc = lmdb().mdb_dbi_open(txn, kCountersDb, flags, &shared.counters);
  if (rc == MDB_SUCCESS) rc = lmdb().mdb_dbi_open(txn, kMetaDb, flags, &shared.meta);
  if (rc == MDB_SUCCESS) rc = lmdb().mdb_dbi_open(txn, kAccessDb, flags, &shared.access);
  return rc;
}

// A read-only environment cannot create databases: they must all exist already.
int open_databases_read_only(MDB_env* env, SharedEnv& shared) {
  MDB_txn* txn = nullptr;
  int rc = lmdb().mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn);
  if (rc != MDB_SUCCESS) return rc;
  rc = open_named_databases(txn, 0, shared);
  if (rc != MDB_SUCCESS) {
    lmdb().mdb_txn_abort(txn);
    return rc;
  }
  return lmdb().mdb_txn_commit(txn);  // keeps the handles
}

// Opens the named databases, creating them on first use. Looking them up needs no write; a store
// that has pages but lacks them is damaged (creating them would write to it), not new. That is
// decided under the writer lock: another process opening the new store at the same time may have
// created them since the look-up.
int open_databases(MDB_env* env, SharedEnv& shared) {
  if (open_databases_read_only(env, shared) == MDB_SUCCESS) return MDB_SUCCESS;
  MDB_txn* txn = nullptr;
  int rc = lmdb().mdb_txn_begin(env, nullptr, 0, &txn);
  if (rc != MDB_SUCCESS) return rc;
  rc = open_named_databases(txn, 0, shared);
  if (rc == MDB_NOTFOUND) {
    MDB_envinfo info{};
    rc = lmdb().mdb_env_info(env, &info) != MDB_SUCCESS || info.me_last_pgno > 1
             ? MDB_CORRUPTED
             : open_named_databases(txn, MDB_CREATE, shared);
  }
  if (rc != MDB_SUCCESS) {
    lmdb().mdb_txn_abort(txn);
    return rc;
  }
  return lmdb().mdb_txn_commit(txn);
}


// Creates, configures and opens an environment on `path` with `flags`. Directory mode (data.mdb +
// lock.mdb inside it); never MDB_WRITEMAP.
int open_environment(const LmdbOptions& options, const std::string& path, unsigned flags, EnvHandle* out) {
  MDB_env* raw = nullptr;
  int rc = lmdb().mdb_env_create(&raw);
  if (rc != MDB_SUCCESS) return rc;
  EnvHandle env(raw);
  install_assert_guard(raw);
  rc = lmdb().mdb_env_set_maxreaders(raw, kMaxReaders);
  if (rc == MDB_SUCCESS) rc = lmdb().mdb_env_set_maxdbs(raw, kMaxDbs);
  if (rc == MDB_SUCCESS) rc = lmdb().mdb_env_set_mapsize(raw, options.map_size_bytes);
  if (rc == MDB_SUCCESS) rc = lmdb().mdb_env_open(raw, path.c_str(), flags, kFileMode);
  if (rc == MDB_SUCCESS) *out = std::move(env);  // a failed open needs a fresh handle: `env` closes it
  return rc;
}

bool is_permission_error(int rc) { return rc == EACCES || rc == EROFS || rc == EPERM; }

// The path LMDB is given for `directory`: /proc/self/fd/N, which resolves to the very directory the
// handle holds (no component can be swapped under it), or `fallback` where /proc does not show it.
std::string handle_path(const DirectoryHandle& directory) { return "/proc/self/fd/" + std::to_string(directory.fd()); }

std::string lmdb_path_for(const DirectoryHandle& directory, const DirectoryId& id, const std::string& fallback,
                          Env& env) {
  const std::string by_handle = handle_path(directory);
  struct stat st {};
  if (env.stat(by_handle, &st) == 0 && DirectoryId{st.st_dev, st.st_ino} == id) return by_handle;
  return fallback;
}

// Whether the environment LMDB opened at `path` is the store in `directory` (identity `id`): its
// data file is the data.mdb in that directory, and `path` still names it (the handle's own
// /proc/self/fd path always does while the handle is open: it is not looked at again). LMDB's file
// descriptor is only fstat()ed.
bool opened_in_checked_directory(MDB_env* env, const DirectoryHandle& directory, const DirectoryId& id,
                                 const std::string& path, Env& system) {
  int data_fd = -1;
  struct stat opened {}, expected {}, at_path {};
  if (lmdb().mdb_env_get_fd(env, &data_fd) != MDB_SUCCESS || ::fstat(data_fd, &opened) != 0) return false;
  if (system.stat_at(directory.fd(), "data.mdb", &expected) != 0 || !same_file(opened, expected)) return false;
  if (path == handle_path(directory)) return true;
  return system.stat(path, &at_path) == 0 && DirectoryId{at_path.st_dev, at_path.st_ino} == id;
}

SharedEnv* Registry::open_locked(const LmdbOptions& options, const StoreLocation& location,
                                 const DirectoryHandle& directory, const DirectoryId& id, Status* status) {
  auto shared = std::make_unique<SharedEnv>();
  shared->id = id;
  // MDB_NOTLS because read transactions are per call and may run on any thread. A directory that
  // is not writable is opened read-only (serve what is there, store nothing); on read-only media
  // (a cache baked into an image) not even the lock file is writable, and no process can be
  // writing, so no lock is needed.
  // LMDB opens by path: it is given one that resolves to the checked directory, and what it opened is
  // compared with that directory afterwards (a swap between the check and the open is refused).
  const std::string lmdb_path = lmdb_path_for(directory, id, location.path, *options.env);
  EnvHandle env;
  int rc = MDB_SUCCESS;
  for (const unsigned flags : {MDB_NOTLS, MDB_NOTLS | MDB_RDONLY, MDB_NOTLS | MDB_RDONLY | MDB_NOLOCK}) {
    rc = open_environment(options, lmdb_path, flags, &env);
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
  if (rc = shared->read_only ? open_databases_read_only(raw, *shared) : open_databases(raw, *shared);
      rc != MDB_SUCCESS) {
    *status = to_status(rc, "open databases in " + options.directory);
    return nullptr;
  }
  MDB_stat stat{};
  if (lmdb().mdb_env_stat(raw, &stat) == MDB_SUCCESS && stat.ms_psize > 0) shared->page_size = stat.ms_psize;
  int dead_readers = 0;
  lmdb().mdb_reader_check(raw, &dead_readers);  // release slots pinned by killed processes

  shared->last_touch_flush = options.env->now_seconds();
  shared->identity_checked_at = shared->last_touch_flush;  // it was just opened by handle
  live_[id] = shared.get();  // may throw: `env` then closes the new environment
  shared->env = env.release();
  shared->users = 1;
  return shared.release();
}

// A counted reference to a SharedEnv for the duration of one operation.
class EnvRef {
 public:
  EnvRef() = default;
  explicit EnvRef(SharedEnv* env) : env_(env) {}
  EnvRef(const EnvRef&) = delete;
  EnvRef& operator=(const EnvRef&) = delete;
  ~EnvRef() {
    if (env_ == nullptr) return;
    Registry& registry = Registry::instance();
    std::lock_guard lock(registry.mu);
    registry.release_locked(env_);
  }

  explicit operator bool() const { return env_ != nullptr; }
  SharedEnv& operator*() const { return *env_; }
  SharedEnv* operator->() const { return env_; }

 private:
  SharedEnv* env_ = nullptr;
};

// ---- Transactions ---------------------------------------------------------------------------

bool structure_verified(SharedEnv& env);

// One LMDB transaction, aborted unless committed. Holds the environment's remap lock shared, and
// adopts a map size grown by another process (MDB_MAP_RESIZED) once before giving up.
class Txn {
 public:
  Txn(SharedEnv& env, unsigned flags) : env_(env), remap_lock_(env.remap_mu, std::defer_lock) {
    // Writing to damaged pages could make LMDB corrupt this process's memory: a store is verified
    // once per process before its first write.
    if ((flags & MDB_RDONLY) == 0 && !structure_verified(env)) {
      rc_ = MDB_CORRUPTED;
      return;
    }
    remap_lock_.lock();
    rc_ = begin(flags);
  }
  ~Txn() {
    if (txn_ != nullptr) lmdb().mdb_txn_abort(txn_);
  }
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  int begin_rc() const { return rc_; }
  MDB_txn* get() const { return txn_; }
  int commit() { return lmdb().mdb_txn_commit(std::exchange(txn_, nullptr)); }
  // Forgets the transaction without ending it (its environment is being abandoned as damaged).
  void release() { txn_ = nullptr; }

 private:
  int begin(unsigned flags) {
    int rc = lmdb().mdb_txn_begin(env_.env, nullptr, flags, &txn_);
    if (rc != MDB_MAP_RESIZED) return keep_on_success(rc);
    remap_lock_.unlock();
    {
      std::unique_lock exclusive(env_.remap_mu);  // no transaction of this process is active
      rc = lmdb().mdb_env_set_mapsize(env_.env, 0);
    }
    remap_lock_.lock();
    if (rc != MDB_SUCCESS) return keep_on_success(rc);
    return keep_on_success(lmdb().mdb_txn_begin(env_.env, nullptr, flags, &txn_));
  }
  int keep_on_success(int rc) {
    if (rc != MDB_SUCCESS) txn_ = nullptr;
    return rc;
  }

  SharedEnv& env_;
  std::shared_lock<std::shared_mutex> remap_lock_;
  MDB_txn* txn_ = nullptr;
  int rc_ = MDB_SUCCESS;
};

// ---- Structure verification -----------------------------------------------------------------

// What LMDB trusts when it writes, checked under the fault guard: every B-tree can be walked to the
// end; every free-list record is a well-formed ID list (count, then strictly descending page
// numbers within the file); every large value's overflow header is intact. LMDB 0.9's layouts.
struct WalkState {
  MDB_cursor* cursor;
  MDB_dbi dbi;
  std::uint64_t last_page;
  std::uint64_t page_size;
  bool free_list;
  bool check_overflow;
  bool sound;
};

bool is_overflow_value(const MDB_val& value, std::uint64_t page_size) {
  const auto start = reinterpret_cast<std::uintptr_t>(value.mv_data);
  return start >= 16 && (start - 16) % page_size == 0;
}

bool overflow_sound(const MDB_val& value, std::uint64_t page_size) {
  const auto start = reinterpret_cast<std::uintptr_t>(value.mv_data);
  if (start < kLmdbPageHeaderSize || (start - kLmdbPageHeaderSize) % page_size != 0) return true;  // inline in a leaf
  const std::string_view header(reinterpret_cast<const char*>(start - kLmdbPageHeaderSize), kLmdbPageHeaderSize);
  return overflow_header_sound(header, value.mv_size, page_size);
}

bool guarded_overflow_sound(const MDB_val& value, std::uint64_t page_size) {
  struct Check {
    const MDB_val* value;
    std::uint64_t page_size;
    bool sound;
  } check{&value, page_size, false};
  return run_guarded([](void* raw) {
           auto* c = static_cast<Check*>(raw);
           c->sound = overflow_sound(*c->value, c->page_size);
         },
                     &check) &&
         check.sound;
}

void walk_tree(void* raw) {
  auto* w = static_cast<WalkState*>(raw);
  const LmdbLibrary& raw_lmdb = *lmdb_library();  // already under the guard
  MDB_val key, value;
  for (int rc = raw_lmdb.mdb_cursor_get(w->cursor, &key, &value, MDB_FIRST); rc != MDB_NOTFOUND;
       rc = raw_lmdb.mdb_cursor_get(w->cursor, &key, &value, MDB_NEXT)) {
    if (rc != MDB_SUCCESS ||
        (w->free_list && !id_list_sound(to_view(value), w->last_page)) ||
        (w->check_overflow && !overflow_sound(value, w->page_size))) {
      w->sound = false;
      return;
    }
  }
}

bool walk_sound(SharedEnv& env, MDB_txn* txn, MDB_dbi dbi, std::uint64_t last_page) {
  MDB_cursor* cursor = nullptr;
  if (lmdb().mdb_cursor_open(txn, dbi, &cursor) != MDB_SUCCESS) return false;
  WalkState state{cursor, dbi, last_page, env.page_size, dbi == kFreeDbi, dbi == env.entries, true};
  const bool finished = run_guarded(&walk_tree, &state);
  lmdb().mdb_cursor_close(cursor);
  return finished && state.sound;
}

bool structure_verified(SharedEnv& env) {
  if (const int state = env.verified.load(std::memory_order_acquire); state != 0) return state > 0;
  std::lock_guard lock(env.verify_mu);
  if (const int state = env.verified.load(std::memory_order_acquire); state != 0) return state > 0;
  bool sound = false;
  {
    Txn txn(env, MDB_RDONLY);
    MDB_envinfo info{};
    if (txn.begin_rc() == MDB_SUCCESS && lmdb().mdb_env_info(env.env, &info) == MDB_SUCCESS) {
      sound = true;
      for (const MDB_dbi dbi : {kFreeDbi, kMainDbi, env.entries, env.access, env.meta, env.counters}) {
        if (!walk_sound(env, txn.get(), dbi, info.me_last_pgno)) {
          sound = false;
          break;
        }
      }
    }
  }
  env.verified.store(sound ? 1 : -1, std::memory_order_release);
  if (!sound) env.damaged.store(true, std::memory_order_release);
  return sound;
}

// Entry count and payload bytes, kept in the "meta" database and updated in the same transaction
// as every change to "entries".
struct Totals {
  std::uint64_t entries = 0;
  std::uint64_t payload_bytes = 0;
};

std::uint64_t read_meta(MDB_txn* txn, MDB_dbi meta, std::string_view name) {
  MDB_val key = to_val(name);
  MDB_val value;
  if (lmdb().mdb_get(txn, meta, &key, &value) != MDB_SUCCESS) return 0;
  return decode_le64(to_view(value)).value_or(0);
}

Totals read_totals(MDB_txn* txn, MDB_dbi meta) {
  return {read_meta(txn, meta, kEntryCountKey), read_meta(txn, meta, kPayloadBytesKey)};
}

int write_meta(MDB_txn* txn, MDB_dbi meta, std::string_view name, std::uint64_t number) {
  char bytes[8];
  store_le64(bytes, number);
  MDB_val key = to_val(name);
  MDB_val value{sizeof bytes, bytes};
  return lmdb().mdb_put(txn, meta, &key, &value, 0);
}

int write_totals(MDB_txn* txn, MDB_dbi meta, const Totals& totals) {
  const int rc = write_meta(txn, meta, kEntryCountKey, totals.entries);
  return rc != MDB_SUCCESS ? rc : write_meta(txn, meta, kPayloadBytesKey, totals.payload_bytes);
}

// The access record of `key`: MDB_SUCCESS with `*out` set, MDB_NOTFOUND, or an error. A record of
// the wrong size reads as found with every field zero (the oldest possible access).
int read_access(MDB_txn* txn, const SharedEnv& env, std::string_view key, AccessRecord* out) {
  MDB_val k = to_val(key);
  MDB_val value;
  const int rc = lmdb().mdb_get(txn, env.access, &k, &value);
  if (rc == MDB_SUCCESS) *out = decode_access(to_view(value)).value_or(AccessRecord{});
  return rc;
}

int write_access(MDB_txn* txn, const SharedEnv& env, std::string_view key, const AccessRecord& record) {
  char bytes[kAccessRecordSize];
  encode_access(record, bytes);
  MDB_val k = to_val(key);
  MDB_val value{sizeof bytes, bytes};
  return lmdb().mdb_put(txn, env.access, &k, &value, 0);
}

// Deletes the access record of `key`; an absent one is not an error.
int delete_access(MDB_txn* txn, const SharedEnv& env, std::string_view key) {
  MDB_val k = to_val(key);
  const int rc = lmdb().mdb_del(txn, env.access, &k, nullptr);
  return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

// Deletes `key` and its access record within `txn` and adjusts the totals; MDB_NOTFOUND if absent.
int delete_entry(MDB_txn* txn, const SharedEnv& env, std::string_view key, const MDB_val& stored) {
  MDB_val k = to_val(key);
  Totals totals = read_totals(txn, env.meta);
  const std::uint64_t payload = payload_size_of(stored.mv_size);
  int rc = lmdb().mdb_del(txn, env.entries, &k, nullptr);
  if (rc == MDB_SUCCESS) rc = delete_access(txn, env, key);
  if (rc != MDB_SUCCESS) return rc;
  totals.entries = saturating_sub(totals.entries, 1);
  totals.payload_bytes = saturating_sub(totals.payload_bytes, payload);
  return write_totals(txn, env.meta, totals);
}

// Map usage as seen by `txn` (a write transaction sees its own changes): every page some database
// occupies, plus the two meta pages. The rest of the file up to its high-water mark is free.
int measure_usage(const SharedEnv& env, MDB_txn* txn, MapUsage* out) {
  MDB_envinfo info{};
  if (const int rc = lmdb().mdb_env_info(env.env, &info); rc != MDB_SUCCESS) return rc;
  std::uint64_t pages = kMetaPages;
  for (const MDB_dbi dbi : {kFreeDbi, kMainDbi, env.entries, env.counters, env.meta, env.access}) {
    MDB_stat stat{};
    if (const int rc = lmdb().mdb_stat(txn, dbi, &stat); rc != MDB_SUCCESS) return rc;
    pages += stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages;
  }
  out->used_bytes = pages * env.page_size;
  out->map_bytes = info.me_mapsize;
  return MDB_SUCCESS;
}

std::uint64_t percent_of(std::uint64_t bytes, std::uint64_t percent) { return bytes / 100 * percent; }

// The contiguous pages a value of `bytes` takes outside its leaf page (saturating: sizes come from
// the store).
std::uint64_t overflow_pages_of(std::uint64_t bytes, std::uint64_t page_size) {
  return overflow_pages(bytes, page_size).value_or(std::numeric_limits<std::uint64_t>::max());
}

bool is_valid_key(const SharedEnv& env, std::string_view key) {
  return !key.empty() && key.size() <= static_cast<std::size_t>(lmdb().mdb_env_get_maxkeysize(env.env));
}

std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

Status closed_error() { return Status::io_error("lmdb store is closed"); }

// Seconds from `then` to `now`, 0 if `then` is not earlier; saturating (records may hold anything).
std::int64_t seconds_since(std::int64_t now, std::int64_t then) {
  if (then >= now) return 0;
  const std::uint64_t difference = static_cast<std::uint64_t>(now) - static_cast<std::uint64_t>(then);
  return difference > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
             ? std::numeric_limits<std::int64_t>::max()
             : static_cast<std::int64_t>(difference);
}

// `now - seconds` (seconds >= 0), saturating at the smallest time.
std::int64_t seconds_before(std::int64_t now, std::int64_t seconds) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  return now < kMin + seconds ? kMin : now - seconds;
}

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

// The outcome of one put transaction.
struct PutAttempt {
  int rc = MDB_SUCCESS;
  std::string_view what;
  bool too_large = false;        // above half the map: refused without evicting
  bool unchanged = false;        // the same value was already stored
  bool over_high_water = false;  // map usage after the put is above the high water mark
  std::uint64_t map_bytes = 0;
};

}  // namespace

// ---- LmdbStore::Impl ------------------------------------------------------------------------

struct LmdbStore::Impl {
  LmdbOptions options;
  StoreLocation location;
  SharedEnv* env = nullptr;  // one user reference; guarded by the registry mutex
  bool closed = false;       // guarded by the registry mutex
  std::atomic<std::uint64_t> corrupt_dropped{0};
  std::atomic<std::uint64_t> quarantined{0};

  ~Impl() {
    if (!location.parent_intact(system())) location.parent.release();  // renumbered: not ours to close
  }

  Env& system() const { return *options.env; }

  // The environment for this process (reopened after fork), or null with `status` set.
  EnvRef acquire(Status* status) {
    Registry& registry = Registry::instance();
    std::lock_guard lock(registry.mu);
    if (closed) {
      *status = closed_error();
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

  // The environment already open in this process, if any; never opens one.
  EnvRef acquire_existing() {
    Registry& registry = Registry::instance();
    std::lock_guard lock(registry.mu);
    if (closed || env == nullptr || !env->belongs_to_this_process()) return EnvRef();
    ++env->users;
    return EnvRef(env);
  }

  void release() {
    if (const EnvRef ref = acquire_existing()) flush_touches(*ref, system().now_seconds());
    Registry& registry = Registry::instance();
    std::lock_guard lock(registry.mu);
    closed = true;
    if (env != nullptr) registry.release_locked(std::exchange(env, nullptr));
  }

  // Whether the store's directory in its parent is no longer the one `env` was opened on (checked at
  // most once a second: one fstatat, not following a link).
  bool directory_was_replaced(SharedEnv& shared) {
    const std::int64_t now = system().now_seconds();
    if (shared.identity_checked_at.exchange(now) == now) return false;
    return !is_open_directory(shared);
  }

  bool is_open_directory(const SharedEnv& shared) {
    struct stat st {};
    return system().stat_at(location.parent.fd(), location.leaf, &st) == 0 && S_ISDIR(st.st_mode) &&
           DirectoryId{st.st_dev, st.st_ino} == shared.id;
  }

  // LMDB reported (or faulted on) damage it cannot repair: move the directory aside, never truncate
  // it in place (other processes have it mapped); they notice the new inode and reopen. This process
  // abandons the environment and opens a fresh store on next use.
  void quarantine_damaged(SharedEnv& shared) {
    if (shared.abandoned.exchange(true)) return;
    quarantined.fetch_add(1, std::memory_order_relaxed);
    if (is_open_directory(shared)) quarantine(location.parent, location.leaf, system());
  }

  // Quarantines the store when `rc` says it is damaged; passes `status` on.
  Status damaged_or(Status status, SharedEnv& shared, int rc) {
    if (is_corruption(rc)) quarantine_damaged(shared);
    return status;
  }

  // ---- get and touches ----

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
  static void guarded_lookup(void* arg) {
    auto* l = static_cast<GuardedLookup*>(arg);
    l->rc = lmdb().mdb_get(l->txn, l->entries, &l->key, &l->value);
    if (l->rc != MDB_SUCCESS) return;
    l->touched = XXH3_64bits(l->value.mv_data, l->value.mv_size);
    l->access_rc = lmdb().mdb_get(l->txn, l->access, &l->key, &l->access_value);
    if (l->access_rc == MDB_SUCCESS) l->touched ^= XXH3_64bits(l->access_value.mv_data, l->access_value.mv_size);
  }

  std::optional<std::string> get(std::string_view key) {
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref || !is_valid_key(*ref, key)) return std::nullopt;
    if (system().fault_for(StoreOperation::kGet) != 0) return std::nullopt;
    std::optional<std::string> found;
    bool stale = false;
    std::int64_t now = 0;
    {
      Txn txn(*ref, MDB_RDONLY);
      if (txn.begin_rc() != MDB_SUCCESS) {
        if (is_corruption(txn.begin_rc())) quarantine_damaged(*ref);
        return std::nullopt;
      }
      GuardedLookup lookup{txn.get(), ref->entries, ref->access, to_val(key), {}, MDB_NOTFOUND, 0, {}, MDB_NOTFOUND};
      if (!run_guarded(&guarded_lookup, &lookup) || is_corruption(lookup.rc)) {
        quarantine_damaged(*ref);  // the read transaction is abandoned with the environment
        txn.release();
        return std::nullopt;
      }
      if (lookup.rc != MDB_SUCCESS) return std::nullopt;
      const MDB_val stored = lookup.value;
      if (const auto payload = unwrap_value(key, to_view(stored))) {
        found.emplace(*payload);
        now = system().now_seconds();
        const std::optional<AccessRecord> record =
            lookup.access_rc == MDB_SUCCESS ? decode_access(to_view(lookup.access_value)) : std::nullopt;
        stale = !record || seconds_since(now, record->last_access) >= kTouchGranularitySeconds;
      }
    }
    if (found) {
      if (stale) note_touch(*ref, key, now);
      return found;
    }
    corrupt_dropped.fetch_add(1, std::memory_order_relaxed);
    drop_if_corrupt(*ref, key);
    return std::nullopt;
  }

  // Queues `key` for a touch; writes the queue when it is full or the last write is old enough.
  static void note_touch(SharedEnv& env, std::string_view key, std::int64_t now) {
    std::unordered_set<std::string> batch;
    {
      std::lock_guard lock(env.touch_mu);
      if (env.pending_touches.size() < kMaxPendingTouches) env.pending_touches.emplace(key);
      const bool due = env.pending_touches.size() >= kMaxPendingTouches || now < env.last_touch_flush ||
                       seconds_since(now, env.last_touch_flush) >= kTouchFlushSeconds;
      if (!due) return;
      batch.swap(env.pending_touches);
      env.last_touch_flush = now;
    }
    write_touches(env, batch, now);
  }

  // Writes every queued touch now (before an eviction and on close).
  static void flush_touches(SharedEnv& env, std::int64_t now) {
    std::unordered_set<std::string> batch;
    {
      std::lock_guard lock(env.touch_mu);
      batch.swap(env.pending_touches);
      env.last_touch_flush = now;
    }
    write_touches(env, batch, now);
  }

  // Best effort, one transaction: sets the last access of each key to `now` where the recorded one
  // is stale (creating the record for an entry that has none); keys no longer stored are skipped.
  static void write_touches(SharedEnv& env, const std::unordered_set<std::string>& keys, std::int64_t now) {
    if (keys.empty()) return;
    Txn txn(env, 0);
    if (txn.begin_rc() != MDB_SUCCESS) return;
    bool changed = false;
    if (apply_touches(txn.get(), env, keys, now, &changed) == MDB_SUCCESS && changed) txn.commit();
  }

  // The touches of write_touches() inside the caller's write transaction; sets `changed` when a
  // record was written.
  static int apply_touches(MDB_txn* txn, SharedEnv& env, const std::unordered_set<std::string>& keys,
                           std::int64_t now, bool* changed) {
    for (const std::string& key : keys) {
      AccessRecord record;
      const int rc = read_access(txn, env, key, &record);
      if (rc == MDB_SUCCESS) {
        if (seconds_since(now, record.last_access) < kTouchGranularitySeconds) continue;
      } else if (rc == MDB_NOTFOUND) {
        MDB_val k = to_val(key);
        MDB_val stored;
        if (lmdb().mdb_get(txn, env.entries, &k, &stored) != MDB_SUCCESS) continue;
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

  // Best effort: re-checks inside a write transaction, since another process may have replaced it.
  // Drops an entry whose envelope failed, but only when the damage is confined to the value's own
  // overflow pages (their page header is intact): deleting then frees exactly those pages. A value
  // stored inside a leaf page means the leaf itself is damaged, and LMDB rewriting it could overrun
  // memory (measured under AddressSanitizer): the whole store is moved aside instead.
  void drop_if_corrupt(SharedEnv& shared, std::string_view key) {
    {
      Txn txn(shared, 0);
      if (txn.begin_rc() != MDB_SUCCESS) {
        if (is_corruption(txn.begin_rc())) quarantine_damaged(shared);
        return;
      }
      MDB_val k = to_val(key);
      MDB_val stored;
      if (lmdb().mdb_get(txn.get(), shared.entries, &k, &stored) != MDB_SUCCESS) return;
      if (unwrap_value(key, to_view(stored))) return;  // replaced meanwhile
      if (is_overflow_value(stored, shared.page_size) && guarded_overflow_sound(stored, shared.page_size)) {
        if (delete_entry(txn.get(), shared, key, stored) == MDB_SUCCESS) txn.commit();
        return;
      }
    }
    quarantine_damaged(shared);
  }

  // ---- put ----

  Status put(std::string_view key, std::string_view value) {
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref) return status;
    if (!is_valid_key(*ref, key)) return Status::invalid_argument("key size out of range");
    if (value.size() > std::numeric_limits<std::size_t>::max() / 2 - kEnvelopeOverhead) {
      return Status::invalid_argument("value too large");
    }
    const std::int64_t now = system().now_seconds();
    PutAttempt attempt = put_once(*ref, key, value, now);
    // A full map, or a full disk (the file cannot grow; evicted pages are reused without growing it).
    if ((attempt.rc == MDB_MAP_FULL || attempt.rc == ENOSPC) && !attempt.too_large && attempt.map_bytes > 0) {
      // Dead readers may pin freed pages; then make room (the value needs contiguous pages) and
      // retry once.
      int dead_readers = 0;
      lmdb().mdb_reader_check(ref->env, &dead_readers);
      EvictGoal goal;
      goal.max_used_bytes = room_for(attempt.map_bytes, wrapped_size(value.size()) + key.size(), ref->page_size);
      goal.record_bytes = wrapped_size(value.size());
      {
        std::lock_guard evicting(ref->evict_mu);
        EvictResult ignored;
        run_eviction(*ref, goal, now, &ignored);
      }
      attempt = put_once(*ref, key, value, now);
    }
    if (attempt.too_large) {
      return Status::full("value of " + std::to_string(value.size()) + " bytes exceeds half the map size (" +
                          std::to_string(attempt.map_bytes) + " bytes)");
    }
    if (attempt.rc != MDB_SUCCESS) return damaged_or(to_status(attempt.rc, attempt.what), *ref, attempt.rc);
    if (attempt.unchanged) note_touch(*ref, key, now);
    if (attempt.over_high_water) evict_if_over_high_water(*ref, now);
    return Status::ok();
  }

  // The map usage to evict down to so that a record of `record_bytes` should fit.
  static std::uint64_t room_for(std::uint64_t map_bytes, std::uint64_t record_bytes, std::uint64_t page_size) {
    const std::uint64_t needed = 2 * (record_bytes + 4 * page_size);
    return std::min(percent_of(map_bytes, kLowWaterPercent), saturating_sub(map_bytes, needed));
  }

  // One write transaction storing (key, value) with its access record and the totals.
  PutAttempt put_once(SharedEnv& shared, std::string_view key, std::string_view value, std::int64_t now) {
    PutAttempt attempt;
    Txn txn(shared, 0);
    if (txn.begin_rc() != MDB_SUCCESS) {
      attempt.rc = txn.begin_rc();
      attempt.what = "begin write";
      return attempt;
    }
    MDB_envinfo info{};
    lmdb().mdb_env_info(shared.env, &info);
    attempt.map_bytes = info.me_mapsize;
    if (const int fault = system().fault_for(StoreOperation::kPut); fault != 0) {
      attempt.rc = fault;
      attempt.what = "put";
      return attempt;
    }
    const std::size_t stored_size = wrapped_size(value.size());
    if (stored_size > attempt.map_bytes / 2) {
      attempt.rc = MDB_MAP_FULL;
      attempt.too_large = true;
      return attempt;
    }
    auto failed = [&attempt](int rc, std::string_view what) {
      attempt.rc = rc;
      attempt.what = what;
      return attempt;
    };
    MDB_val k = to_val(key);
    MDB_val existing;
    Totals totals = read_totals(txn.get(), shared.meta);
    int rc = lmdb().mdb_get(txn.get(), shared.entries, &k, &existing);
    if (rc == MDB_SUCCESS) {
      if (unwrap_value(key, to_view(existing)) == value) {  // nothing to rewrite
        attempt.unchanged = true;
        return attempt;
      }
      totals.payload_bytes = saturating_sub(totals.payload_bytes, payload_size_of(existing.mv_size));
    } else if (rc == MDB_NOTFOUND) {
      ++totals.entries;
    } else {
      return failed(rc, "read before put");
    }
    MDB_val reserved{stored_size, nullptr};
    if (rc = lmdb().mdb_put(txn.get(), shared.entries, &k, &reserved, MDB_RESERVE); rc != MDB_SUCCESS) {
      return failed(rc, "put");
    }
    wrap_value_into(key, value, static_cast<char*>(reserved.mv_data));  // before any other call
    totals.payload_bytes += value.size();
    if (rc = write_access(txn.get(), shared, key, AccessRecord{value.size(), now, now}); rc != MDB_SUCCESS) {
      return failed(rc, "write access record");
    }
    if (rc = write_totals(txn.get(), shared.meta, totals); rc != MDB_SUCCESS) return failed(rc, "update totals");
    MapUsage usage;
    if (measure_usage(shared, txn.get(), &usage) == MDB_SUCCESS) {
      attempt.over_high_water = usage.used_bytes > percent_of(usage.map_bytes, kHighWaterPercent);
    }
    if (rc = txn.commit(); rc != MDB_SUCCESS) return failed(rc, "commit put");
    return attempt;
  }

  // The automatic policy after a committed put (best effort: the put has succeeded whatever
  // happens here), skipped when this process is already evicting.
  static void evict_if_over_high_water(SharedEnv& env, std::int64_t now) {
    try {
      std::unique_lock evicting(env.evict_mu, std::try_to_lock);
      if (!evicting.owns_lock()) return;
      EvictGoal goal;
      goal.automatic = true;
      EvictResult ignored;
      run_eviction(env, goal, now, &ignored);
    } catch (...) {
    }
  }

  // ---- eviction ----

  Status evict(const EvictOptions& evict_options, EvictResult* result) {
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref) return status;
    if (const int fault = system().fault_for(StoreOperation::kEvict); fault != 0) return to_status(fault, "evict");
    const std::int64_t now = system().now_seconds();
    EvictGoal goal;
    if (evict_options.older_than_seconds) {
      if (*evict_options.older_than_seconds < 0) return Status::invalid_argument("negative age");
      goal.accessed_before = seconds_before(now, *evict_options.older_than_seconds);
    }
    goal.max_payload_bytes = evict_options.max_bytes;
    goal.automatic = !goal.accessed_before && !goal.max_payload_bytes;
    std::lock_guard evicting(ref->evict_mu);
    return run_eviction(*ref, goal, now, result);
  }

  // Evicts towards `goal`; the caller holds env.evict_mu and no transaction. `result` accumulates
  // what was committed.
  static Status run_eviction(SharedEnv& env, EvictGoal goal, std::int64_t now, EvictResult* result) {
    int dead_readers = 0;
    lmdb().mdb_reader_check(env.env, &dead_readers);
    flush_touches(env, now);
    {
      Txn txn(env, MDB_RDONLY);
      if (txn.begin_rc() != MDB_SUCCESS) return to_status(txn.begin_rc(), "begin read");
      MapUsage usage;
      if (const int rc = measure_usage(env, txn.get(), &usage); rc != MDB_SUCCESS) {
        return to_status(rc, "measure map usage");
      }
      if (goal.automatic) {
        if (usage.used_bytes <= percent_of(usage.map_bytes, kHighWaterPercent)) return Status::ok();
        goal.max_used_bytes = percent_of(usage.map_bytes, kLowWaterPercent);
      }
      if (goal.record_bytes) {
        goal.max_used_bytes = std::min(goal.max_used_bytes.value_or(usage.used_bytes),
                                       saturating_sub(usage.used_bytes, 2 * *goal.record_bytes));
      }
      if (!goal.accessed_before && goal.sizes_met(usage, read_totals(txn.get(), env.meta))) return Status::ok();
    }
    const std::uint64_t evicted_before = result->entries;
    Status outcome = Status::ok();
    for (int round = 0; round < kEvictRounds; ++round) {
      std::vector<Candidate> candidates;
      if (const int rc = collect_candidates(env, &candidates); rc != MDB_SUCCESS) {
        outcome = to_status(rc, "scan for eviction");
        break;
      }
      std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        return a.last_access != b.last_access ? a.last_access < b.last_access : a.key < b.key;
      });
      std::size_t forced = 0;  // candidates[0, forced) go whatever the size goals
      const std::uint64_t run_needed = goal.record_bytes ? overflow_pages_of(*goal.record_bytes, env.page_size) : 0;
      for (std::size_t i = 0; goal.record_bytes && round == 0 && forced < 2 && i < candidates.size(); ++i) {
        if (overflow_pages_of(candidates[i].stored_bytes, env.page_size) < run_needed) continue;
        const auto at = candidates.begin() + static_cast<std::ptrdiff_t>(i);
        std::rotate(candidates.begin() + static_cast<std::ptrdiff_t>(forced), at, at + 1);  // keeps LRU order
        ++forced;
      }
      bool met = false;
      const std::uint64_t evicted_at_round_start = result->entries;
      for (std::size_t next = 0; next < candidates.size() && !met && outcome;) {
        outcome = evict_batch(env, goal, candidates, forced, &next, &met, result);
      }
      if (met || !outcome || !goal.has_size_goal() || result->entries == evicted_at_round_start) break;
    }
    if (result->entries > evicted_before) {
      // One more commit, so that the next writer may reuse the pages freed above (LMDB reuses a
      // transaction's freed pages only from the second transaction after it).
      Txn txn(env, 0);
      if (txn.begin_rc() == MDB_SUCCESS &&
          write_meta(txn.get(), env.meta, kLastEvictionKey, static_cast<std::uint64_t>(now)) == MDB_SUCCESS) {
        txn.commit();
      }
    }
    return outcome;
  }

  // One write transaction deleting up to kEvictBatch candidates from `*next` on; sets `*met` when the
  // goal holds (the first `forced` candidates go regardless). Each candidate is re-checked: one
  // touched since the scan, or gone, is skipped.
  static Status evict_batch(SharedEnv& env, const EvictGoal& goal, const std::vector<Candidate>& candidates,
                            std::size_t forced, std::size_t* next, bool* met, EvictResult* result) {
    Txn txn(env, 0);
    if (txn.begin_rc() != MDB_SUCCESS) return to_status(txn.begin_rc(), "begin eviction");
    EvictResult batch;
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
      if (const int rc = evict_one(txn.get(), env, candidate, &batch, &changed); rc != MDB_SUCCESS) {
        return write_failed(env, rc, "evict");
      }
    }
    if (!changed) return Status::ok();
    if (const int rc = txn.commit(); rc != MDB_SUCCESS) return write_failed(env, rc, "commit eviction");
    result->entries += batch.entries;
    result->bytes += batch.bytes;
    return Status::ok();
  }

  static int evict_one(MDB_txn* txn, const SharedEnv& env, const Candidate& candidate, EvictResult* batch,
                       bool* changed) {
    AccessRecord record;
    const int access_rc = read_access(txn, env, candidate.key, &record);
    if (access_rc != MDB_SUCCESS && access_rc != MDB_NOTFOUND) return access_rc;
    MDB_val k = to_val(candidate.key);
    MDB_val stored;
    int rc = lmdb().mdb_get(txn, env.entries, &k, &stored);
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
    return MDB_SUCCESS;
  }

  // Every entry with its last access (the oldest possible for one without an access record), and
  // every access record without an entry, by a merge of the two databases (both in key order).
  static int collect_candidates(SharedEnv& env, std::vector<Candidate>* out) {
    constexpr std::int64_t kOldest = std::numeric_limits<std::int64_t>::min();
    Txn txn(env, MDB_RDONLY);
    if (txn.begin_rc() != MDB_SUCCESS) return txn.begin_rc();
    MDB_cursor* raw_entries = nullptr;
    MDB_cursor* raw_access = nullptr;
    if (const int rc = lmdb().mdb_cursor_open(txn.get(), env.entries, &raw_entries); rc != MDB_SUCCESS) return rc;
    const std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> entries(raw_entries, lmdb().mdb_cursor_close);
    if (const int rc = lmdb().mdb_cursor_open(txn.get(), env.access, &raw_access); rc != MDB_SUCCESS) return rc;
    const std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> access(raw_access, lmdb().mdb_cursor_close);
    MDB_val entry_key;
    MDB_val entry_value;
    MDB_val access_key;
    MDB_val access_value;
    int entry_rc = lmdb().mdb_cursor_get(entries.get(), &entry_key, &entry_value, MDB_FIRST);
    int access_rc = lmdb().mdb_cursor_get(access.get(), &access_key, &access_value, MDB_FIRST);
    while (entry_rc == MDB_SUCCESS || access_rc == MDB_SUCCESS) {
      const int order = entry_rc != MDB_SUCCESS   ? 1
                        : access_rc != MDB_SUCCESS ? -1
                                                   : to_view(entry_key).compare(to_view(access_key));
      if (order > 0) {  // an access record without an entry
        out->push_back({kOldest, std::string(to_view(access_key)), 0});
        access_rc = lmdb().mdb_cursor_get(access.get(), &access_key, &access_value, MDB_NEXT);
        continue;
      }
      std::int64_t last_access = kOldest;
      if (order == 0) {
        last_access = decode_access(to_view(access_value)).value_or(AccessRecord{}).last_access;
        access_rc = lmdb().mdb_cursor_get(access.get(), &access_key, &access_value, MDB_NEXT);
      }
      out->push_back({last_access, std::string(to_view(entry_key)), entry_value.mv_size});
      entry_rc = lmdb().mdb_cursor_get(entries.get(), &entry_key, &entry_value, MDB_NEXT);
    }
    if (entry_rc != MDB_NOTFOUND) return entry_rc;
    return access_rc == MDB_NOTFOUND ? MDB_SUCCESS : access_rc;
  }

  MapUsage map_usage() {
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref) return {};
    Txn txn(*ref, MDB_RDONLY);
    if (txn.begin_rc() != MDB_SUCCESS) return {};
    MapUsage usage;
    if (measure_usage(*ref, txn.get(), &usage) != MDB_SUCCESS) return {};
    return usage;
  }

  // MAP_FULL can come from readers pinning old pages: release any left by killed processes.
  static Status write_failed(SharedEnv& env, int rc, std::string_view what) {
    if (is_corruption(rc)) env.damaged.store(true, std::memory_order_release);
    if (rc == MDB_MAP_FULL) {
      int dead_readers = 0;
      lmdb().mdb_reader_check(env.env, &dead_readers);
    }
    return to_status(rc, what);
  }

  Status erase(std::string_view key) {
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref) return status;
    if (!is_valid_key(*ref, key)) return Status::ok();  // such a key can never be stored
    if (const int fault = system().fault_for(StoreOperation::kErase); fault != 0) return to_status(fault, "erase");
    Txn txn(*ref, 0);
    if (txn.begin_rc() != MDB_SUCCESS) return to_status(txn.begin_rc(), "begin write");
    MDB_val k = to_val(key);
    MDB_val stored;
    int rc = lmdb().mdb_get(txn.get(), ref->entries, &k, &stored);
    if (rc == MDB_NOTFOUND) return Status::ok();
    if (rc != MDB_SUCCESS) return to_status(rc, "read before erase");
    if (rc = delete_entry(txn.get(), *ref, key, stored); rc != MDB_SUCCESS) {
      return damaged_or(write_failed(*ref, rc, "erase"), *ref, rc);
    }
    if (rc = txn.commit(); rc != MDB_SUCCESS) return damaged_or(write_failed(*ref, rc, "commit erase"), *ref, rc);
    return Status::ok();
  }

  Totals totals() {
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref) return {};
    Txn txn(*ref, MDB_RDONLY);
    if (txn.begin_rc() != MDB_SUCCESS) return {};
    return read_totals(txn.get(), ref->meta);
  }

  Status clear() {
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref) return status;
    Txn txn(*ref, 0);
    if (txn.begin_rc() != MDB_SUCCESS) return to_status(txn.begin_rc(), "begin write");
    int rc = lmdb().mdb_drop(txn.get(), ref->entries, 0);
    if (rc == MDB_SUCCESS) rc = lmdb().mdb_drop(txn.get(), ref->access, 0);
    if (rc == MDB_SUCCESS) rc = lmdb().mdb_drop(txn.get(), ref->counters, 0);
    if (rc == MDB_SUCCESS) rc = write_totals(txn.get(), ref->meta, Totals{});
    if (rc == MDB_SUCCESS) rc = txn.commit();
    return rc == MDB_SUCCESS ? Status::ok() : write_failed(*ref, rc, "clear");
  }

  Status add_counters(const Counters& deltas) {
    if (deltas.empty()) return Status::ok();
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref) return status;
    for (const auto& entry : deltas) {
      if (!is_valid_key(*ref, entry.first)) return Status::invalid_argument("bad counter name");
    }
    Txn txn(*ref, 0);
    if (txn.begin_rc() != MDB_SUCCESS) return to_status(txn.begin_rc(), "begin write");
    for (const auto& [name, delta] : deltas) {
      if (const int rc = add_counter(txn.get(), ref->counters, name, delta); rc != MDB_SUCCESS) {
        return write_failed(*ref, rc, "add counter");
      }
    }
    // The queued touches ride along (one commit): a short-lived process's reads are recorded by its
    // statistics flush at exit.
    const std::int64_t now = system().now_seconds();
    std::unordered_set<std::string> touches;
    {
      std::lock_guard lock(ref->touch_mu);
      touches.swap(ref->pending_touches);
      ref->last_touch_flush = now;
    }
    bool touched = false;
    if (const int rc = apply_touches(txn.get(), *ref, touches, now, &touched); rc != MDB_SUCCESS) {
      return write_failed(*ref, rc, "record accesses");
    }
    if (const int rc = txn.commit(); rc != MDB_SUCCESS) return write_failed(*ref, rc, "commit counters");
    return Status::ok();
  }

  static int add_counter(MDB_txn* txn, MDB_dbi counters, std::string_view name, std::int64_t delta) {
    MDB_val key = to_val(name);
    MDB_val value;
    std::int64_t current = 0;
    if (const int rc = lmdb().mdb_get(txn, counters, &key, &value); rc == MDB_SUCCESS) {
      current = static_cast<std::int64_t>(decode_le64(to_view(value)).value_or(0));
    } else if (rc != MDB_NOTFOUND) {
      return rc;
    }
    char bytes[8];
    store_le64(bytes, static_cast<std::uint64_t>(wrapping_add(current, delta)));
    MDB_val updated{sizeof bytes, bytes};
    return lmdb().mdb_put(txn, counters, &key, &updated, 0);
  }

  Counters counters() {
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref) return {};
    Txn txn(*ref, MDB_RDONLY);
    if (txn.begin_rc() != MDB_SUCCESS) return {};
    MDB_cursor* cursor = nullptr;
    if (lmdb().mdb_cursor_open(txn.get(), ref->counters, &cursor) != MDB_SUCCESS) return {};
    const std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> cursor_owner(cursor, lmdb().mdb_cursor_close);
    Counters result;
    MDB_val key;
    MDB_val value;
    for (int rc = lmdb().mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == MDB_SUCCESS;
         rc = lmdb().mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
      if (const auto number = decode_le64(to_view(value))) {
        result.emplace(std::string(to_view(key)), static_cast<std::int64_t>(*number));
      }
    }
    return result;
  }
};

// ---- LmdbStore ------------------------------------------------------------------------------

LmdbStore::LmdbStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LmdbStore::~LmdbStore() {
  const ErrnoGuard errno_guard;
  close();
}

std::unique_ptr<LmdbStore> LmdbStore::open(const LmdbOptions& options, Status* status) {
  const ErrnoGuard errno_guard;
  try {
    std::string load_error;
    if (lmdb_library(&load_error) == nullptr) {
      set_status(status, Status::io_error(load_error));
      return nullptr;
    }
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    if (impl->options.env == nullptr) impl->options.env = Env::system();
    if (const int fault = impl->options.env->fault_for(StoreOperation::kOpen); fault != 0) {
      set_status(status, to_status(fault, "open " + options.directory));
      return nullptr;
    }
    if (Status located = locate_store(options.directory, options.parent_directory_fd, *impl->options.env,
                                      &impl->location);
        !located) {
      set_status(status, std::move(located));
      return nullptr;
    }
    Status opened;
    if (!impl->acquire(&opened)) {  // opens eagerly so that failures surface here
      set_status(status, std::move(opened));
      return nullptr;
    }
    set_status(status, Status::ok());
    return std::unique_ptr<LmdbStore>(new LmdbStore(std::move(impl)));
  } catch (const std::bad_alloc&) {
    set_status(status, Status::io_error("out of memory opening lmdb store"));
  } catch (...) {
    set_status(status, Status::io_error("failed to open lmdb store"));
  }
  return nullptr;
}

std::optional<std::string> LmdbStore::get(std::string_view key) {
  const ErrnoGuard errno_guard;
  try {
    return impl_->get(key);
  } catch (...) {
    return std::nullopt;
  }
}

Status LmdbStore::put(std::string_view key, std::string_view value) {
  const ErrnoGuard errno_guard;
  try {
    return impl_->put(key, value);
  } catch (const std::bad_alloc&) {
    return Status::io_error("out of memory in put");
  } catch (...) {
    return Status::io_error("put failed");
  }
}

Status LmdbStore::erase(std::string_view key) {
  const ErrnoGuard errno_guard;
  try {
    return impl_->erase(key);
  } catch (...) {
    return Status::io_error("erase failed");
  }
}

std::uint64_t LmdbStore::entry_count() {
  const ErrnoGuard errno_guard;
  try {
    return impl_->totals().entries;
  } catch (...) {
    return 0;
  }
}

std::uint64_t LmdbStore::size_bytes() {
  const ErrnoGuard errno_guard;
  try {
    return impl_->totals().payload_bytes;
  } catch (...) {
    return 0;
  }
}

Status LmdbStore::clear() {
  const ErrnoGuard errno_guard;
  try {
    return impl_->clear();
  } catch (...) {
    return Status::io_error("clear failed");
  }
}

void LmdbStore::close() {
  const ErrnoGuard errno_guard;
  try {
    if (impl_ != nullptr) impl_->release();
  } catch (...) {
  }
}

Status LmdbStore::add_counters(const Counters& deltas) {
  const ErrnoGuard errno_guard;
  try {
    return impl_->add_counters(deltas);
  } catch (const std::bad_alloc&) {
    return Status::io_error("out of memory in add_counters");
  } catch (...) {
    return Status::io_error("add_counters failed");
  }
}

Counters LmdbStore::counters() {
  const ErrnoGuard errno_guard;
  try {
    return impl_->counters();
  } catch (...) {
    return {};
  }
}

Status LmdbStore::evict(const EvictOptions& options, EvictResult* result) {
  const ErrnoGuard errno_guard;
  EvictResult local;
  EvictResult* out = result != nullptr ? result : &local;
  *out = EvictResult{};
  try {
    return impl_->evict(options, out);
  } catch (const std::bad_alloc&) {
    return Status::io_error("out of memory in evict");
  } catch (...) {
    return Status::io_error("evict failed");
  }
}

MapUsage LmdbStore::map_usage() {
  const ErrnoGuard errno_guard;
  try {
    return impl_->map_usage();
  } catch (...) {
    return {};
  }
}

Status LmdbStore::for_each(
    const std::function<void(std::string_view key, std::optional<std::string_view> payload)>& visit) {
  const ErrnoGuard errno_guard;
  try {
    Status status;
    const EnvRef ref = impl_->acquire(&status);
    if (!ref) return status;
    Txn txn(*ref, MDB_RDONLY);
    if (txn.begin_rc() != MDB_SUCCESS) return to_status(txn.begin_rc(), "begin read");
    MDB_cursor* cursor = nullptr;
    if (const int rc = lmdb().mdb_cursor_open(txn.get(), ref->entries, &cursor); rc != MDB_SUCCESS) {
      return to_status(rc, "open cursor");
    }
    const std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> owner(cursor, lmdb().mdb_cursor_close);
    MDB_val key, value;
    int rc = lmdb().mdb_cursor_get(cursor, &key, &value, MDB_FIRST);
    for (; rc == MDB_SUCCESS; rc = lmdb().mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
      struct Check {
        MDB_val key, value;
        bool intact;
      } check{key, value, false};
      const bool readable = run_guarded(
          [](void* raw) {
            auto* c = static_cast<Check*>(raw);
            c->intact = unwrap_value(to_view(c->key), to_view(c->value)).has_value();
          },
          &check);
      std::optional<std::string_view> payload;
      if (readable && check.intact) payload = unwrap_value(to_view(key), to_view(value));
      visit(to_view(key), payload);
    }
    return rc == MDB_NOTFOUND ? Status::ok() : to_status(rc, "walk entries");
  } catch (...) {
    return Status::io_error("for_each failed");
  }
}

bool LmdbStore::read_only() {
  const ErrnoGuard errno_guard;
  Status ignored;
  const EnvRef ref = impl_->acquire(&ignored);
  return ref && ref->read_only;
}

std::uint64_t LmdbStore::stores_quarantined() const { return impl_->quarantined.load(std::memory_order_relaxed); }

std::uint64_t LmdbStore::corrupt_entries_dropped() const {
  return impl_->corrupt_dropped.load(std::memory_order_relaxed);
}

}  // namespace nvrtc_cache::store
