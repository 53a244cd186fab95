// api::Cache: the C API's cache (include/nvrtc_cache.h) in C++: a namespace of API entries
// (api/api_entry.h) in the store the shim uses, opened from the shim's configuration
// (core/config.h) with the shared tiers it names behind it (store/remote/tiered_store.h).
//  - get() answers only with the value stored under the very key asked for; put() replaces; erase()
//    and clear() act on this node's store, and only on API entries.
//  - count(), size() and the cap walk the API entries' keys and access records in the store (no
//    value is read), so they are exact across processes.
//  - The cap (max_size_bytes) is checked after each put of this handle: while the whole store's
//    payload bytes (exact across processes, read in O(1)) are within it, so is the namespace;
//    otherwise a walk measures the namespace and erases its least recently used entries until it
//    fits (every process's entries count; a value larger than the cap does not survive its put).
//    Recency is the store's access record (to about a minute, shared by every process), then this
//    handle's own reads and writes (exact, in this process).
// Contract: thread-safe (close() aside: the last call); never throws but std::bad_alloc; fork: the
// store and the tiers reopen in a child; no output to stdout or stderr.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/stats.h"
#include "store/lmdb/lmdb_store.h"
#include "store/remote/tiered_store.h"
#include "store/status.h"

namespace nvrtc_cache::api {

// A failure, with the C API's status code (nvrtc_cache_status).
struct Failure {
  int code = 0;
  std::string message;
};

struct OpenRequest {
  bool from_defaults = false;            // NVRTC_CACHE_OPEN_DEFAULTS
  std::optional<std::string> directory;  // nullopt: the configured one
  std::string settings;                  // configuration lines over the configuration
  std::uint64_t max_size_bytes = 0;      // 0: no cap of the namespace's own
};

struct Stats {
  std::uint64_t hits = 0, misses = 0, puts = 0, put_failures = 0, erases = 0, evictions = 0, rejected = 0;
  std::uint64_t shared_tiers = 0, store_entries = 0, store_bytes = 0;
};

class Cache {
 public:
  // The cache, or null with *failure saying why.
  static std::unique_ptr<Cache> open(const OpenRequest& request, Failure* failure);
  ~Cache();

  const std::string& directory() const { return directory_; }

  // The value, or nullopt (a miss).
  std::optional<std::string> get(std::string_view key);
  std::optional<Failure> put(std::string_view key, std::string_view value);
  // NOT_FOUND when there was no entry under `key`.
  std::optional<Failure> erase(std::string_view key);
  std::optional<Failure> clear();
  std::optional<Failure> count(std::uint64_t* entries);
  std::optional<Failure> size(std::uint64_t* bytes);
  Stats stats();
  bool flush(std::chrono::milliseconds budget);
  void close();

 private:
  Cache() = default;
  struct Member {
    std::string store_key;
    std::uint64_t bytes = 0;
    std::int64_t last_access = 0;
  };
  std::optional<Failure> walk(std::vector<Member>* members, std::uint64_t* bytes);
  void touch(const std::string& store_key);
  void enforce_cap();

  std::string directory_;
  std::unique_ptr<store::Store> store_;  // the tiered store, or the local one
  store::LmdbStore* local_ = nullptr;    // the local store (owned by store_)
  store::remote::TieredStore* tiered_ = nullptr;
  std::uint64_t max_size_bytes_ = 0;

  std::mutex mu_;                                                                    // guards what follows
  std::unordered_map<std::string, std::pair<std::int64_t, std::uint64_t>> touched_;  // key -> (seconds, order)
  std::uint64_t touch_order_ = 0;
  bool evicting_ = false;

  std::atomic<std::uint64_t> hits_{0}, misses_{0}, puts_{0}, put_failures_{0}, erases_{0}, evictions_{0}, rejected_{0};
  // The same traffic in the store's statistics (api_hits, api_misses, api_stores), which `nvrtc-cache
  // stats` shows beside the shim's: counted straight into the counters file, like the shim's.
  core::StatsDeltas counts_;
};

}  // namespace nvrtc_cache::api
