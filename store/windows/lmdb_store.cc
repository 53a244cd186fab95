#include "store/windows/lmdb_store.h"

#include <lmdb.h>
#include <windows.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "store/envelope.h"
#include "store/lmdb/arithmetic.h"
#include "store/lmdb/records.h"
#include "store/windows/wide.h"
#include "util/binary_io.h"

namespace nvrtc_cache::store {
namespace {

constexpr std::string_view kEntryCountKey = "entry_count";
constexpr std::string_view kPayloadBytesKey = "payload_bytes";

MDB_val to_val(std::string_view bytes) { return MDB_val{bytes.size(), const_cast<char*>(bytes.data())}; }
std::string_view to_view(const MDB_val& val) { return {static_cast<const char*>(val.mv_data), val.mv_size}; }

Status error_status(int rc, const char* what) {
  const std::string message = std::string(what) + ": " + mdb_strerror(rc);
  if (rc == MDB_MAP_FULL) return Status::full(message);
  if (rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INVALID) return Status::corruption(message);
  if (rc == EACCES) return Status::read_only(message);
  return Status::io_error(message);
}

// Keeps the thread's last-error value across a store call (LMDB's file calls set it).
class LastErrorGuard {
 public:
  LastErrorGuard() : saved_(GetLastError()) {}
  ~LastErrorGuard() { SetLastError(saved_); }
  LastErrorGuard(const LastErrorGuard&) = delete;
  LastErrorGuard& operator=(const LastErrorGuard&) = delete;

 private:
  DWORD saved_;
};

std::uint64_t read_u64(MDB_txn* txn, MDB_dbi dbi, std::string_view name) {
  MDB_val key = to_val(name);
  MDB_val value;
  if (mdb_get(txn, dbi, &key, &value) != MDB_SUCCESS) return 0;
  return decode_le64(to_view(value)).value_or(0);
}

int write_u64(MDB_txn* txn, MDB_dbi dbi, std::string_view name, std::uint64_t number) {
  char bytes[kCounterRecordSize];
  util::store_le(bytes, number, 8);
  MDB_val key = to_val(name);
  MDB_val value{sizeof bytes, bytes};
  return mdb_put(txn, dbi, &key, &value, 0);
}

}  // namespace

struct WindowsLmdbStore::Impl {
  MDB_env* env = nullptr;
  MDB_dbi entries = 0, counters = 0, meta = 0, access = 0;
  bool read_only = false;
  std::atomic<std::uint64_t> corrupt{0};
  std::atomic<bool> closed{false};

  // Runs `body` in a transaction (committed when it returns MDB_SUCCESS and the transaction writes).
  template <typename Body>
  int in_transaction(bool write, Body body) {
    if (closed.load(std::memory_order_acquire)) return EINVAL;
    if (write && read_only) return EACCES;
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env, nullptr, write ? 0 : MDB_RDONLY, &txn);
    if (rc != MDB_SUCCESS) return rc;
    rc = body(txn);
    if (rc != MDB_SUCCESS || !write) {
      mdb_txn_abort(txn);
      return rc;
    }
    return mdb_txn_commit(txn);
  }

  // Deletes `key` (stored as `stored`) with its access record and adjusts the totals.
  int delete_entry(MDB_txn* txn, std::string_view key, std::size_t stored_size) {
    MDB_val k = to_val(key);
    int rc = mdb_del(txn, entries, &k, nullptr);
    if (rc != MDB_SUCCESS) return rc;
    rc = mdb_del(txn, access, &k, nullptr);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return rc;
    rc = write_u64(txn, meta, kEntryCountKey, lmdb::saturating_sub(read_u64(txn, meta, kEntryCountKey), 1));
    if (rc != MDB_SUCCESS) return rc;
    return write_u64(txn, meta, kPayloadBytesKey,
                     lmdb::saturating_sub(read_u64(txn, meta, kPayloadBytesKey), payload_size_of(stored_size)));
  }
};

bool create_directories(const std::string& directory) {
  const std::wstring wide = windows::to_wide(directory);
  for (std::size_t i = 0; i <= wide.size(); ++i) {
    if (i != wide.size() && wide[i] != L'\\' && wide[i] != L'/') continue;
    const std::wstring prefix = wide.substr(0, i);
    if (prefix.empty() || prefix.back() == L':' || prefix == L"\\" || prefix == L"\\\\") continue;
    if (GetFileAttributesW(prefix.c_str()) == INVALID_FILE_ATTRIBUTES) CreateDirectoryW(prefix.c_str(), nullptr);
  }
  const DWORD attributes = GetFileAttributesW(wide.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
}

std::unique_ptr<WindowsLmdbStore> WindowsLmdbStore::open(const WindowsLmdbOptions& options, Status* status) {
  LastErrorGuard last_error;
  try {
    if (!create_directories(options.directory)) {
      *status = Status::io_error("cannot create the cache directory " + options.directory);
      return nullptr;
    }
    auto impl = std::make_unique<Impl>();
    impl->read_only = options.read_only;
    int rc = mdb_env_create(&impl->env);
    if (rc == MDB_SUCCESS) rc = mdb_env_set_maxdbs(impl->env, 8);
    if (rc == MDB_SUCCESS) rc = mdb_env_set_mapsize(impl->env, options.map_size_bytes);
    if (rc == MDB_SUCCESS) {
      rc = mdb_env_open(impl->env, options.directory.c_str(), MDB_NOTLS | (options.read_only ? MDB_RDONLY : 0), 0600);
    }
    if (rc == MDB_SUCCESS) {
      rc = impl->in_transaction(!options.read_only, [&](MDB_txn* txn) {
        const unsigned flags = options.read_only ? 0 : MDB_CREATE;
        int r = mdb_dbi_open(txn, "entries", flags, &impl->entries);
        if (r == MDB_SUCCESS) r = mdb_dbi_open(txn, "counters", flags, &impl->counters);
        if (r == MDB_SUCCESS) r = mdb_dbi_open(txn, "meta", flags, &impl->meta);
        if (r == MDB_SUCCESS) r = mdb_dbi_open(txn, "access", flags, &impl->access);
        return r;
      });
      if (options.read_only && rc == MDB_SUCCESS) {
        // A read transaction's handles are kept only once committed; reopen them in a committed one.
        MDB_txn* txn = nullptr;
        rc = mdb_txn_begin(impl->env, nullptr, MDB_RDONLY, &txn);
        if (rc == MDB_SUCCESS) {
          rc = mdb_dbi_open(txn, "entries", 0, &impl->entries);
          if (rc == MDB_SUCCESS) rc = mdb_dbi_open(txn, "counters", 0, &impl->counters);
          if (rc == MDB_SUCCESS) rc = mdb_dbi_open(txn, "meta", 0, &impl->meta);
          if (rc == MDB_SUCCESS) rc = mdb_dbi_open(txn, "access", 0, &impl->access);
          rc = rc == MDB_SUCCESS ? mdb_txn_commit(txn) : (mdb_txn_abort(txn), rc);
        }
      }
    }
    if (rc != MDB_SUCCESS) {
      if (impl->env != nullptr) mdb_env_close(impl->env);
      *status = error_status(rc, ("cannot open the store in " + options.directory).c_str());
      return nullptr;
    }
    *status = Status::ok();
    return std::unique_ptr<WindowsLmdbStore>(new WindowsLmdbStore(std::move(impl)));
  } catch (...) {
    *status = Status::io_error("out of memory opening the store");
    return nullptr;
  }
}

WindowsLmdbStore::WindowsLmdbStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WindowsLmdbStore::~WindowsLmdbStore() { close(); }

void WindowsLmdbStore::close() {
  LastErrorGuard last_error;
  if (!impl_->closed.exchange(true)) mdb_env_close(impl_->env);
}

std::optional<std::string> WindowsLmdbStore::get(std::string_view key) {
  LastErrorGuard last_error;
  try {
    std::optional<std::string> out;
    bool damaged = false;
    impl_->in_transaction(false, [&](MDB_txn* txn) {
      MDB_val k = to_val(key);
      MDB_val value;
      const int rc = mdb_get(txn, impl_->entries, &k, &value);
      if (rc != MDB_SUCCESS) return rc;
      if (std::optional<std::string_view> payload = unwrap_value(key, to_view(value))) {
        out.emplace(*payload);
      } else {
        damaged = true;
      }
      return MDB_SUCCESS;
    });
    if (damaged) {
      impl_->corrupt.fetch_add(1, std::memory_order_relaxed);
      (void)erase(key);
    }
    return out;
  } catch (...) {
    return std::nullopt;
  }
}

Status WindowsLmdbStore::put(std::string_view key, std::string_view value) {
  LastErrorGuard last_error;
  try {
    const std::string wrapped = wrap_value(key, value);
    const int rc = impl_->in_transaction(true, [&](MDB_txn* txn) {
      MDB_val k = to_val(key);
      MDB_val old;
      int r = mdb_get(txn, impl_->entries, &k, &old);
      if (r == MDB_SUCCESS) {
        r = impl_->delete_entry(txn, key, old.mv_size);
      } else if (r == MDB_NOTFOUND) {
        r = MDB_SUCCESS;
      }
      if (r != MDB_SUCCESS) return r;
      MDB_val v = to_val(wrapped);
      r = mdb_put(txn, impl_->entries, &k, &v, 0);
      if (r != MDB_SUCCESS) return r;
      const std::int64_t now = static_cast<std::int64_t>(time(nullptr));
      char record[kAccessRecordSize];
      encode_access({value.size(), now, now}, record);
      MDB_val a{sizeof record, record};
      r = mdb_put(txn, impl_->access, &k, &a, 0);
      if (r == MDB_SUCCESS) r = write_u64(txn, impl_->meta, kEntryCountKey, read_u64(txn, impl_->meta, kEntryCountKey) + 1);
      if (r == MDB_SUCCESS) {
        r = write_u64(txn, impl_->meta, kPayloadBytesKey, read_u64(txn, impl_->meta, kPayloadBytesKey) + value.size());
      }
      return r;
    });
    return rc == MDB_SUCCESS ? Status::ok() : error_status(rc, "put");
  } catch (...) {
    return Status::io_error("out of memory in put");
  }
}

Status WindowsLmdbStore::erase(std::string_view key) {
  LastErrorGuard last_error;
  const int rc = impl_->in_transaction(true, [&](MDB_txn* txn) {
    MDB_val k = to_val(key);
    MDB_val old;
    const int r = mdb_get(txn, impl_->entries, &k, &old);
    if (r == MDB_NOTFOUND) return MDB_SUCCESS;
    if (r != MDB_SUCCESS) return r;
    return impl_->delete_entry(txn, key, old.mv_size);
  });
  return rc == MDB_SUCCESS ? Status::ok() : error_status(rc, "erase");
}

std::uint64_t WindowsLmdbStore::entry_count() {
  LastErrorGuard last_error;
  std::uint64_t n = 0;
  impl_->in_transaction(false, [&](MDB_txn* txn) {
    n = read_u64(txn, impl_->meta, kEntryCountKey);
    return MDB_SUCCESS;
  });
  return n;
}

std::uint64_t WindowsLmdbStore::size_bytes() {
  LastErrorGuard last_error;
  std::uint64_t n = 0;
  impl_->in_transaction(false, [&](MDB_txn* txn) {
    n = read_u64(txn, impl_->meta, kPayloadBytesKey);
    return MDB_SUCCESS;
  });
  return n;
}

Status WindowsLmdbStore::clear() {
  LastErrorGuard last_error;
  const int rc = impl_->in_transaction(true, [&](MDB_txn* txn) {
    int r = mdb_drop(txn, impl_->entries, 0);
    if (r == MDB_SUCCESS) r = mdb_drop(txn, impl_->access, 0);
    if (r == MDB_SUCCESS) r = mdb_drop(txn, impl_->meta, 0);
    if (r == MDB_SUCCESS) r = mdb_drop(txn, impl_->counters, 0);
    return r;
  });
  return rc == MDB_SUCCESS ? Status::ok() : error_status(rc, "clear");
}

Status WindowsLmdbStore::add_counters(const Counters& deltas) {
  LastErrorGuard last_error;
  if (deltas.empty()) return Status::ok();
  const int rc = impl_->in_transaction(true, [&](MDB_txn* txn) {
    for (const auto& [name, delta] : deltas) {
      const auto current = static_cast<std::int64_t>(read_u64(txn, impl_->counters, name));
      const int r = write_u64(txn, impl_->counters, name, static_cast<std::uint64_t>(lmdb::wrapping_add(current, delta)));
      if (r != MDB_SUCCESS) return r;
    }
    return MDB_SUCCESS;
  });
  return rc == MDB_SUCCESS ? Status::ok() : error_status(rc, "add_counters");
}

Counters WindowsLmdbStore::counters() {
  LastErrorGuard last_error;
  Counters out;
  try {
    impl_->in_transaction(false, [&](MDB_txn* txn) {
      MDB_cursor* cursor = nullptr;
      int rc = mdb_cursor_open(txn, impl_->counters, &cursor);
      if (rc != MDB_SUCCESS) return rc;
      MDB_val key, value;
      for (rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == MDB_SUCCESS;
           rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
        if (std::optional<std::uint64_t> v = decode_le64(to_view(value))) {
          out.emplace(std::string(to_view(key)), static_cast<std::int64_t>(*v));
        }
      }
      mdb_cursor_close(cursor);
      return MDB_SUCCESS;
    });
  } catch (...) {
    out.clear();
  }
  return out;
}

std::uint64_t WindowsLmdbStore::corrupt_entries_dropped() const { return impl_->corrupt.load(); }

Status WindowsLmdbStore::for_each(
    const std::function<void(std::string_view key, std::optional<std::string_view> payload)>& visit) {
  LastErrorGuard last_error;
  const int rc = impl_->in_transaction(false, [&](MDB_txn* txn) {
    MDB_cursor* cursor = nullptr;
    int r = mdb_cursor_open(txn, impl_->entries, &cursor);
    if (r != MDB_SUCCESS) return r;
    MDB_val key, value;
    for (r = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); r == MDB_SUCCESS;
         r = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
      visit(to_view(key), unwrap_value(to_view(key), to_view(value)));
    }
    mdb_cursor_close(cursor);
    return r == MDB_NOTFOUND ? MDB_SUCCESS : r;
  });
  return rc == MDB_SUCCESS ? Status::ok() : error_status(rc, "for_each");
}

}  // namespace nvrtc_cache::store
