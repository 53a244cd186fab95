#include "store/lmdb_store.h"

#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <compare>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <utility>

#include "store/envelope.h"
#include "store/lmdb_library.h"

namespace nvrtc_cache::store {
namespace {

// Only reached after LmdbStore::open verified that the library loaded.
const LmdbLibrary& lmdb() { return *lmdb_library(); }

constexpr unsigned kMaxReaders = 1024;
constexpr MDB_dbi kMaxDbs = 4;
constexpr mdb_mode_t kFileMode = 0600;
constexpr mode_t kDirectoryMode = 0700;
constexpr const char* kEntriesDb = "entries";
constexpr const char* kCountersDb = "counters";
constexpr const char* kMetaDb = "meta";
constexpr std::string_view kEntryCountKey = "entry_count";
constexpr std::string_view kPayloadBytesKey = "payload_bytes";

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

void store_le64(char* out, std::uint64_t value) {
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xffu);
}

// Decodes an 8-byte little-endian integer; nullopt if `val` is not exactly 8 bytes.
std::optional<std::uint64_t> load_le64(const MDB_val& val) {
  if (val.mv_size != 8) return std::nullopt;
  const auto* bytes = static_cast<const unsigned char*>(val.mv_data);
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8; ++i) value |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  return value;
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

// mkdir -p with mode 0700 for every component created; succeeds if `path` ends up a directory.
Status ensure_directory(const std::string& path) {
  if (path.empty()) return Status::invalid_argument("empty store directory");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    for (std::size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
      const std::string prefix = path.substr(0, end);
      if (::mkdir(prefix.c_str(), kDirectoryMode) != 0) {
        if (const int error = errno; error != EEXIST) return to_status(error, "mkdir " + prefix);
      }
      if (end == std::string::npos) break;
    }
    if (::stat(path.c_str(), &st) != 0) {
      const int error = errno;
      return to_status(error, "stat " + path);
    }
  }
  if (!S_ISDIR(st.st_mode)) return Status::invalid_argument(path + " is not a directory");
  return Status::ok();
}

struct DirectoryId {
  dev_t device = 0;
  ino_t inode = 0;
  auto operator<=>(const DirectoryId&) const = default;
};

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
  DirectoryId id;
  std::uint64_t generation = g_fork_generation.load(std::memory_order_acquire);
  pid_t pid = ::getpid();
  std::size_t users = 0;  // guarded by Registry::mu
  // Shared by every transaction of this process; exclusive to adopt another process's map size.
  std::shared_mutex remap_mu;

  bool belongs_to_this_process() const {
    return generation == g_fork_generation.load(std::memory_order_acquire) && pid == ::getpid();
  }
};

struct EnvCloser {
  void operator()(MDB_env* env) const { lmdb().mdb_env_close(env); }
};
using EnvHandle = std::unique_ptr<MDB_env, EnvCloser>;

// Owns the map from directory identity to the live environment. Everything is guarded by `mu`,
// which the fork handlers hold across fork() so that a child never inherits it locked.
class Registry {
 public:
  static Registry& instance();

  // Returns the environment for `options.directory` with one more user, opening it if needed.
  SharedEnv* acquire_locked(const LmdbOptions& options, Status* status);
  // Drops one user; the last one closes the environment (or leaks it if inherited across fork).
  void release_locked(SharedEnv* env);

  std::mutex mu;

 private:
  SharedEnv* open_locked(const LmdbOptions& options, const DirectoryId& id, Status* status);

  // The environment in use for each directory; an entry inherited across fork is replaced on the
  // next open and erased when its last user goes.
  std::map<DirectoryId, SharedEnv*> live_;
};

Registry* g_registry = nullptr;

void before_fork() { g_registry->mu.lock(); }
void after_fork_in_parent() { g_registry->mu.unlock(); }
void after_fork_in_child() {
  g_fork_generation.fetch_add(1, std::memory_order_acq_rel);
  g_registry->mu.unlock();
}

Registry& Registry::instance() {
  // Leaked on purpose: other threads may still use stores while static destructors run.
  static Registry* const registry = [] {
    g_registry = new Registry;
    pthread_atfork(&before_fork, &after_fork_in_parent, &after_fork_in_child);
    return g_registry;
  }();
  return *registry;
}

SharedEnv* Registry::acquire_locked(const LmdbOptions& options, Status* status) {
  if (Status made = ensure_directory(options.directory); !made) {
    *status = std::move(made);
    return nullptr;
  }
  struct stat st {};
  if (::stat(options.directory.c_str(), &st) != 0) {
    const int error = errno;
    *status = to_status(error, "stat " + options.directory);
    return nullptr;
  }
  const DirectoryId id{st.st_dev, st.st_ino};
  if (const auto found = live_.find(id); found != live_.end() && found->second->belongs_to_this_process()) {
    ++found->second->users;
    return found->second;
  }
  return open_locked(options, id, status);
}

void Registry::release_locked(SharedEnv* env) {
  if (--env->users > 0) return;
  if (const auto found = live_.find(env->id); found != live_.end() && found->second == env) {
    live_.erase(found);
  }
  // A handle inherited across fork is leaked, not closed: the ancestor still owns its mapping,
  // file descriptors and locks.
  if (env->belongs_to_this_process()) lmdb().mdb_env_close(env->env);
  delete env;
}

// Opens the named databases, creating them on first use.
int open_databases(MDB_env* env, SharedEnv& shared) {
  MDB_txn* txn = nullptr;
  int rc = lmdb().mdb_txn_begin(env, nullptr, 0, &txn);
  if (rc != MDB_SUCCESS) return rc;
  rc = lmdb().mdb_dbi_open(txn, kEntriesDb, MDB_CREATE, &shared.entries);
  if (rc == MDB_SUCCESS) rc = lmdb().mdb_dbi_open(txn, kCountersDb, MDB_CREATE, &shared.counters);
  if (rc == MDB_SUCCESS) rc = lmdb().mdb_dbi_open(txn, kMetaDb, MDB_CREATE, &shared.meta);
  if (rc != MDB_SUCCESS) {
    lmdb().mdb_txn_abort(txn);
    return rc;
  }
  return lmdb().mdb_txn_commit(txn);
}

SharedEnv* Registry::open_locked(const LmdbOptions& options, const DirectoryId& id, Status* status) {
  auto shared = std::make_unique<SharedEnv>();
  shared->id = id;
  MDB_env* raw = nullptr;
  if (const int rc = lmdb().mdb_env_create(&raw); rc != MDB_SUCCESS) {
    *status = to_status(rc, "lmdb().mdb_env_create");
    return nullptr;
  }
  EnvHandle env(raw);
  int rc = lmdb().mdb_env_set_maxreaders(raw, kMaxReaders);
  if (rc == MDB_SUCCESS) rc = lmdb().mdb_env_set_maxdbs(raw, kMaxDbs);
  if (rc == MDB_SUCCESS) rc = lmdb().mdb_env_set_mapsize(raw, options.map_size_bytes);
  if (rc != MDB_SUCCESS) {
    *status = to_status(rc, "configure lmdb environment");
    return nullptr;
  }
  // Directory mode (data.mdb + lock.mdb inside it); MDB_NOTLS because read transactions are per
  // call and may run on any thread; never MDB_WRITEMAP.
  if (rc = lmdb().mdb_env_open(raw, options.directory.c_str(), MDB_NOTLS, kFileMode); rc != MDB_SUCCESS) {
    *status = to_status(rc, "lmdb().mdb_env_open " + options.directory);
    return nullptr;
  }
  if (rc = open_databases(raw, *shared); rc != MDB_SUCCESS) {
    *status = to_status(rc, "open databases in " + options.directory);
    return nullptr;
  }
  int dead_readers = 0;
  lmdb().mdb_reader_check(raw, &dead_readers);  // release slots pinned by killed processes

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

// One LMDB transaction, aborted unless committed. Holds the environment's remap lock shared, and
// adopts a map size grown by another process (MDB_MAP_RESIZED) once before giving up.
class Txn {
 public:
  Txn(SharedEnv& env, unsigned flags) : env_(env), remap_lock_(env.remap_mu) { rc_ = begin(flags); }
  ~Txn() {
    if (txn_ != nullptr) lmdb().mdb_txn_abort(txn_);
  }
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  int begin_rc() const { return rc_; }
  MDB_txn* get() const { return txn_; }
  int commit() { return lmdb().mdb_txn_commit(std::exchange(txn_, nullptr)); }

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
  return load_le64(value).value_or(0);
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

// Deletes `key` from "entries" within `txn` and adjusts the totals; MDB_NOTFOUND if absent.
int delete_entry(MDB_txn* txn, const SharedEnv& env, std::string_view key, const MDB_val& stored) {
  MDB_val k = to_val(key);
  Totals totals = read_totals(txn, env.meta);
  const std::uint64_t payload = payload_size_of(stored.mv_size);
  const int rc = lmdb().mdb_del(txn, env.entries, &k, nullptr);
  if (rc != MDB_SUCCESS) return rc;
  totals.entries = saturating_sub(totals.entries, 1);
  totals.payload_bytes = saturating_sub(totals.payload_bytes, payload);
  return write_totals(txn, env.meta, totals);
}

bool is_valid_key(const SharedEnv& env, std::string_view key) {
  return !key.empty() && key.size() <= static_cast<std::size_t>(lmdb().mdb_env_get_maxkeysize(env.env));
}

std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

Status closed_error() { return Status::io_error("lmdb store is closed"); }

}  // namespace

// ---- LmdbStore::Impl ------------------------------------------------------------------------

struct LmdbStore::Impl {
  LmdbOptions options;
  SharedEnv* env = nullptr;  // one user reference; guarded by the registry mutex
  bool closed = false;       // guarded by the registry mutex
  std::atomic<std::uint64_t> corrupt_dropped{0};

  // The environment for this process (reopened after fork), or null with `status` set.
  EnvRef acquire(Status* status) {
    Registry& registry = Registry::instance();
    std::lock_guard lock(registry.mu);
    if (closed) {
      *status = closed_error();
      return EnvRef();
    }
    if (env != nullptr && !env->belongs_to_this_process()) {
      registry.release_locked(std::exchange(env, nullptr));  // inherited: leaked, never closed
    }
    if (env == nullptr) env = registry.acquire_locked(options, status);
    if (env == nullptr) return EnvRef();
    ++env->users;
    return EnvRef(env);
  }

  void release() {
    Registry& registry = Registry::instance();
    std::lock_guard lock(registry.mu);
    closed = true;
    if (env != nullptr) registry.release_locked(std::exchange(env, nullptr));
  }

  std::optional<std::string> get(std::string_view key) {
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref || !is_valid_key(*ref, key)) return std::nullopt;
    {
      Txn txn(*ref, MDB_RDONLY);
      if (txn.begin_rc() != MDB_SUCCESS) return std::nullopt;
      MDB_val k = to_val(key);
      MDB_val stored;
      if (lmdb().mdb_get(txn.get(), ref->entries, &k, &stored) != MDB_SUCCESS) return std::nullopt;
      if (const auto payload = unwrap_value(key, to_view(stored))) return std::string(*payload);
    }
    corrupt_dropped.fetch_add(1, std::memory_order_relaxed);
    drop_if_corrupt(*ref, key);
    return std::nullopt;
  }

  // Best effort: re-checks inside a write transaction, since another process may have replaced it.
  static void drop_if_corrupt(SharedEnv& env, std::string_view key) {
    Txn txn(env, 0);
    if (txn.begin_rc() != MDB_SUCCESS) return;
    MDB_val k = to_val(key);
    MDB_val stored;
    if (lmdb().mdb_get(txn.get(), env.entries, &k, &stored) != MDB_SUCCESS) return;
    if (unwrap_value(key, to_view(stored))) return;
    if (delete_entry(txn.get(), env, key, stored) == MDB_SUCCESS) txn.commit();
  }

  Status put(std::string_view key, std::string_view value) {
    Status status;
    const EnvRef ref = acquire(&status);
    if (!ref) return status;
    if (!is_valid_key(*ref, key)) return Status::invalid_argument("key size out of range");
    if (value.size() > std::numeric_limits<std::size_t>::max() - kEnvelopeOverhead) {
      return Status::invalid_argument("value too large");
    }
    Txn txn(*ref, 0);
    if (txn.begin_rc() != MDB_SUCCESS) return to_status(txn.begin_rc(), "begin write");
    MDB_val k = to_val(key);
    MDB_val existing;
    Totals totals = read_totals(txn.get(), ref->meta);
    int rc = lmdb().mdb_get(txn.get(), ref->entries, &k, &existing);
    if (rc == MDB_SUCCESS) {
      if (unwrap_value(key, to_view(existing)) == value) return Status::ok();  // nothing to rewrite
      totals.payload_bytes = saturating_sub(totals.payload_bytes, payload_size_of(existing.mv_size));
    } else if (rc == MDB_NOTFOUND) {
      ++totals.entries;
    } else {
      return to_status(rc, "read before put");
    }
    MDB_val reserved{wrapped_size(value.size()), nullptr};
    if (rc = lmdb().mdb_put(txn.get(), ref->entries, &k, &reserved, MDB_RESERVE); rc != MDB_SUCCESS) {
      return write_failed(*ref, rc, "put");
    }
    wrap_value_into(key, value, static_cast<char*>(reserved.mv_data));  // before any other call
    totals.payload_bytes += value.size();
    if (rc = write_totals(txn.get(), ref->meta, totals); rc != MDB_SUCCESS) {
      return write_failed(*ref, rc, "update totals");
    }
    if (rc = txn.commit(); rc != MDB_SUCCESS) return write_failed(*ref, rc, "commit put");
    return Status::ok();
  }

  // MAP_FULL can come from readers pinning old pages: release any left by killed processes.
  static Status write_failed(SharedEnv& env, int rc, std::string_view what) {
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
    Txn txn(*ref, 0);
    if (txn.begin_rc() != MDB_SUCCESS) return to_status(txn.begin_rc(), "begin write");
    MDB_val k = to_val(key);
    MDB_val stored;
    int rc = lmdb().mdb_get(txn.get(), ref->entries, &k, &stored);
    if (rc == MDB_NOTFOUND) return Status::ok();
    if (rc != MDB_SUCCESS) return to_status(rc, "read before erase");
    if (rc = delete_entry(txn.get(), *ref, key, stored); rc != MDB_SUCCESS) {
      return write_failed(*ref, rc, "erase");
    }
    if (rc = txn.commit(); rc != MDB_SUCCESS) return write_failed(*ref, rc, "commit erase");
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
    if (const int rc = txn.commit(); rc != MDB_SUCCESS) return write_failed(*ref, rc, "commit counters");
    return Status::ok();
  }

  static int add_counter(MDB_txn* txn, MDB_dbi counters, std::string_view name, std::int64_t delta) {
    MDB_val key = to_val(name);
    MDB_val value;
    std::int64_t current = 0;
    if (const int rc = lmdb().mdb_get(txn, counters, &key, &value); rc == MDB_SUCCESS) {
      current = static_cast<std::int64_t>(load_le64(value).value_or(0));
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
      if (const auto number = load_le64(value)) {
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

std::uint64_t LmdbStore::corrupt_entries_dropped() const {
  return impl_->corrupt_dropped.load(std::memory_order_relaxed);
}

}  // namespace nvrtc_cache::store
