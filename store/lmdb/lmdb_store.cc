// LmdbStore's public entry points: each runs its Impl operation through guarded(), which keeps
// errno and turns any exception into the call's failure result.
#include "store/lmdb/lmdb_store.h"

#include <new>
#include <type_traits>
#include <utility>

#include "platform/errno_guard.h"
#include "store/lmdb/errors.h"
#include "store/lmdb/library.h"
#include "store/lmdb/store_impl.h"

namespace nvrtc_cache::store {
namespace {

// What a public call returns when its body throws: a Status saying "out of memory in <what>" or
// "<what> failed"; otherwise an empty result (nullopt, 0, no counters, zero usage) or nothing.
template <typename Result>
Result failure(const char* what, bool out_of_memory) {
  if constexpr (std::is_same_v<Result, Status>) {
    return Status::io_error(out_of_memory ? std::string("out of memory in ") + what : std::string(what) + " failed");
  } else if constexpr (!std::is_void_v<Result>) {
    return Result{};
  }
}

// Runs `body` as every public entry point must: errno preserved, no exception escaping into the host.
template <typename Body>
auto guarded(const char* what, Body&& body) -> decltype(body()) {
  using Result = decltype(body());
  const platform::ErrnoGuard errno_guard;
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return failure<Result>(what, true);
  } catch (...) {
    return failure<Result>(what, false);
  }
}

void set_status(Status* out, Status value) {
  if (out != nullptr) *out = std::move(value);
}

}  // namespace

LmdbStore::LmdbStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LmdbStore::~LmdbStore() { close(); }

std::unique_ptr<LmdbStore> LmdbStore::open(const LmdbOptions& options, Status* status) {
  std::unique_ptr<LmdbStore> store;
  Status outcome = guarded("open lmdb store", [&] {
    std::string load_error;
    if (lmdb::lmdb_library(&load_error) == nullptr) return Status::io_error(load_error);
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    if (impl->options.env == nullptr) impl->options.env = platform::Env::system();
    if (const int fault = impl->options.env->fault_for(platform::StoreOperation::kOpen); fault != 0) {
      return lmdb::to_status(fault, "open " + options.directory);
    }
    if (Status located =
            lmdb::locate_store(options.directory, options.parent_directory_fd, *impl->options.env, &impl->location);
        !located) {
      return located;
    }
    Status opened;
    if (!impl->acquire(&opened)) return opened;  // opens eagerly so that failures surface here
    store.reset(new LmdbStore(std::move(impl)));
    return Status::ok();
  });
  set_status(status, std::move(outcome));
  return store;
}

std::optional<std::string> LmdbStore::get(std::string_view key) {
  return guarded("get", [&] { return impl_->get(key); });
}

Status LmdbStore::put(std::string_view key, std::string_view value) {
  return guarded("put", [&] { return impl_->put(key, value); });
}

Status LmdbStore::erase(std::string_view key) {
  return guarded("erase", [&] { return impl_->erase(key); });
}

std::uint64_t LmdbStore::entry_count() {
  return guarded("entry_count", [&] { return impl_->totals().entries; });
}

std::uint64_t LmdbStore::size_bytes() {
  return guarded("size_bytes", [&] { return impl_->totals().payload_bytes; });
}

Status LmdbStore::clear() {
  return guarded("clear", [&] { return impl_->clear(); });
}

void LmdbStore::close() {
  guarded("close", [&] {
    if (impl_ != nullptr) impl_->release();
  });
}

Status LmdbStore::add_counters(const Counters& deltas) {
  return guarded("add_counters", [&] { return impl_->add_counters(deltas); });
}

CounterFile* LmdbStore::counter_file() {
  return guarded("counter_file", [&]() -> CounterFile* {
    Status ignored;
    const lmdb::EnvRef ref = impl_->acquire(&ignored);
    return ref ? ref->counter_file.get() : nullptr;  // lives as long as the environment (never freed under a user)
  });
}

bool LmdbStore::was_evicted(std::string_view key) {
  return guarded("was_evicted", [&] { return impl_->was_evicted(key); });
}

Counters LmdbStore::counters() {
  return guarded("counters", [&] { return impl_->counters(); });
}

Status LmdbStore::evict(const EvictOptions& options, EvictResult* result, const EvictProgress& progress) {
  EvictResult local;
  EvictResult* out = result != nullptr ? result : &local;
  *out = EvictResult{};
  return guarded("evict", [&] { return impl_->evict(options, out, progress); });
}

MapUsage LmdbStore::map_usage() {
  return guarded("map_usage", [&] { return impl_->map_usage(); });
}

Status LmdbStore::for_each(
    const std::function<void(std::string_view key, std::optional<std::string_view> payload)>& visit) {
  return guarded("for_each", [&] { return impl_->for_each(visit); });
}

Status LmdbStore::for_each_with_access(const EntryVisitor& visit) {
  return guarded("for_each", [&] { return impl_->for_each_entry(visit, true); });
}

Status LmdbStore::for_each_key_with_prefix(std::string_view prefix, const KeyVisitor& visit) {
  return guarded("for_each", [&] { return impl_->for_each_key_with_prefix(prefix, visit); });
}

bool LmdbStore::read_only() {
  return guarded("read_only", [&] {
    Status ignored;
    const lmdb::EnvRef ref = impl_->acquire(&ignored);
    return ref && ref->read_only;
  });
}

std::uint64_t LmdbStore::stores_quarantined() const { return impl_->quarantined.load(std::memory_order_relaxed); }
std::uint64_t LmdbStore::directories_recreated() const { return impl_->recreated.load(std::memory_order_relaxed); }

std::uint64_t LmdbStore::corrupt_entries_dropped() const {
  return impl_->corrupt_dropped.load(std::memory_order_relaxed);
}

}  // namespace nvrtc_cache::store
