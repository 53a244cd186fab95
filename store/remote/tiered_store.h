// TieredStore: the node-local store first, then the shared tiers, behind the one Store interface.
//  - get(): the local store; on a miss each shared tier in order (a tier whose breaker is open is
//    skipped). A shared value is unsealed as untrusted input (store/remote/sealed_value.h); a good
//    one is written back to the local store (so the next hit is local) and returned. Whatever the
//    caller does with a value from a shared tier (manifests are validated against this node's
//    files) it does exactly as with a local one.
//  - put(): the local store, then a sealed copy for every writable tier, queued for the process's
//    background writer (store/remote/write_behind.h): a compile never waits for a shared tier.
//    Values over a tier's max-entry-size are not sent to it.
//  - Everything else (erase, clear, counts, counters) is the local store's. add_counters() adds the
//    shared tiers' counters since the last call, as `tier.<index>.<name>` (kTierCounterNames).
//  - Failures are misses or skipped writes, counted, logged once per tier and kind through `log`.
// Contract: thread-safe; never throws except std::bad_alloc; fork: nothing here is tied to a
// process (the writer and the tiers reconnect in a child).
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/remote/breaker.h"
#include "store/remote/remote_claim.h"
#include "store/remote/tier_set.h"
#include "store/remote/write_behind.h"
#include "store/store.h"

namespace nvrtc_cache::store::remote {

// hits: results served from the tier (compile, link and C API entries); index_hits: manifests, the
// direct mode's index, served from it (a hit through the index reads a manifest, then a result).
#define NVRTC_CACHE_TIER_COUNTERS(X) \
  X(hits)                            \
  X(index_hits)                      \
  X(misses)                          \
  X(errors)                          \
  X(timeouts)                        \
  X(writes)                          \
  X(write_drops)                     \
  X(bytes_read)                      \
  X(bytes_written)                   \
  X(mac_rejected)                    \
  X(corrupt)                         \
  X(skipped)                         \
  X(breaker_opened)

enum class TierCounter {
#define X(name) name,
  NVRTC_CACHE_TIER_COUNTERS(X)
#undef X
      kCount
};

inline constexpr std::array<std::string_view, static_cast<std::size_t>(TierCounter::kCount)> kTierCounterNames = {
#define X(name) #name,
    NVRTC_CACHE_TIER_COUNTERS(X)
#undef X
};

// "tier.<index>.<name>": the counter name in the store.
std::string tier_counter_name(std::size_t index, TierCounter counter);

// While alive, get() on this thread consults the shared tiers only when `consult_shared` (the
// single-flight wait polls the shared tiers less often than the local store).
class SharedLookups {
 public:
  explicit SharedLookups(bool consult_shared);
  ~SharedLookups();
  SharedLookups(const SharedLookups&) = delete;
  SharedLookups& operator=(const SharedLookups&) = delete;

 private:
  bool previous_;
};

class TieredStore final : public Store {
 public:
  using LogOnce = std::function<void(std::string_view topic, std::string_view message)>;

  TieredStore(std::unique_ptr<Store> local, std::vector<ConfiguredTier> tiers, std::optional<Secret> secret,
              LogOnce log, WriteBehind& writer = process_write_behind());
  ~TieredStore() override;

  std::optional<std::string> get(std::string_view key) override;
  Status put(std::string_view key, std::string_view value) override;
  Status erase(std::string_view key) override { return local_->erase(key); }
  std::uint64_t entry_count() override { return local_->entry_count(); }
  std::uint64_t size_bytes() override { return local_->size_bytes(); }
  Status clear() override { return local_->clear(); }
  void close() override { local_->close(); }
  Status add_counters(const Counters& deltas) override;
  Counters counters() override { return local_->counters(); }
  CounterFile* counter_file() override { return local_->counter_file(); }
  std::uint64_t corrupt_entries_dropped() const override { return local_->corrupt_entries_dropped(); }
  bool was_evicted(std::string_view key) override { return local_->was_evicted(key); }
  std::uint64_t stores_quarantined() const override { return local_->stores_quarantined(); }
  std::uint64_t directories_recreated() const override { return local_->directories_recreated(); }

  Status put_local(std::string_view key, std::string_view value) override { return local_->put_local(key, value); }
  Store& local() { return *local_; }
  std::size_t tier_count() const { return slots_.size(); }

  // From now on the tiers' counters are added straight to `file` (which must outlive the store's use).
  void count_in(CounterFile& file);
  // Waits at most `budget` for the queued shared writes (at exit: 1 s); true when all were written.
  bool flush(std::chrono::milliseconds budget);

  // Tries the cross-node claim "<prefix>:claim:<name>" on the first writable tier that supports
  // claims (kUnsupported when none does), for `lease` (kClaimLease in the shim), renewed while
  // held. A claim held by another is answered kHeldByOther only when a holder keeps it alive (a
  // lease no longer than kLongestGenuineLease, signed when there is a secret); any other claim is
  // kUnsupported: compile without one, never wait for it.
  RemoteClaim try_claim(std::string_view name, std::chrono::milliseconds lease);

  struct TierStatus {
    std::string name;
    bool writable;
    BreakerState breaker;
  };
  std::vector<TierStatus> tier_status() const;

 private:
  std::optional<std::string> get_shared(std::string_view key);
  void write_shared(std::string_view key, std::string_view value);

  std::unique_ptr<Store> local_;
  std::vector<std::shared_ptr<TierSlot>> slots_;
  std::shared_ptr<const Secret> secret_;
  WriteBehind& writer_;
};

}  // namespace nvrtc_cache::store::remote
