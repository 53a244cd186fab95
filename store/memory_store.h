// MemoryStore: an in-process Store with least-recently-used eviction under a byte cap. Test support
// for the store tests and the benchmarks (library nvrtc_cache_memory_store); the shim uses LmdbStore.
// Contract: thread-safe (one mutex); nothing touches the filesystem; contents die with the process.
// A value larger than the cap is not stored. Counters live in memory too.
// Accounting: size_bytes() and the cap count value bytes only (keys are not counted), matching
// LmdbStore::size_bytes(). get() makes an entry the most recently used; put() evicts from the
// least recently used end until the new value fits. fork: a child gets a copy of the contents (the
// mutex must not be held by another thread at fork time, as for any std::mutex).
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "store/store.h"

namespace nvrtc_cache::store {

class MemoryStore final : public Store {
 public:
  explicit MemoryStore(std::uint64_t max_bytes);

  std::optional<std::string> get(std::string_view key) override;
  Status put(std::string_view key, std::string_view value) override;
  Status erase(std::string_view key) override;
  std::uint64_t entry_count() override;
  std::uint64_t size_bytes() override;
  Status clear() override;
  void close() override;
  Status add_counters(const Counters& deltas) override;
  Counters counters() override;

 private:
  using Lru = std::list<std::pair<std::string, std::string>>;  // front = most recent
  void evict_to_fit_locked(std::uint64_t incoming);
  void erase_locked(Lru::iterator entry);

  const std::uint64_t max_bytes_;
  std::mutex mu_;
  Lru lru_;
  // Keys view the strings inside the list nodes, which never move.
  std::unordered_map<std::string_view, Lru::iterator> index_;
  std::uint64_t bytes_ = 0;
  Counters counters_;
  bool closed_ = false;
};

}  // namespace nvrtc_cache::store
