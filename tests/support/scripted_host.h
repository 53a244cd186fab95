// What the lifecycle tests (compile_lifecycle_test.cc, handle_lifecycle_test.cc) script around the
// lifecycle: a memory store whose writes can be made to fail and whose entries can be hidden (as
// if another process had not stored them yet), a claim that says while it is held, and the host
// parts both tests share (the store, counters, claims with another process's result arriving while
// waiting); each test adds its own watch (run_watched).
// Contract: single-threaded test helpers; no filesystem access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/stats.h"

#include "shim/lifecycle/jit_host.h"
#include "store/memory_store.h"

namespace nvrtc_cache::shim::testing {

class FlakyStore final : public store::Store {
 public:
  std::optional<std::string> get(std::string_view key) override { return hidden ? std::nullopt : memory.get(key); }
  store::Status put(std::string_view key, std::string_view value) override {
    ++puts;
    if (fail_puts) return store::Status::full("the disk is full");
    return memory.put(key, value);
  }
  store::Status erase(std::string_view key) override { return memory.erase(key); }
  std::uint64_t entry_count() override { return memory.entry_count(); }
  std::uint64_t size_bytes() override { return memory.size_bytes(); }
  store::Status clear() override { return memory.clear(); }
  void close() override {}
  store::Status add_counters(const store::Counters& deltas) override { return memory.add_counters(deltas); }
  store::Counters counters() override { return memory.counters(); }

  store::MemoryStore memory{1 << 20};
  bool fail_puts = false;
  bool hidden = false;  // every entry looks absent
  int puts = 0;
};

// A claim that sets `*held` while it lives.
class HeldFlag final : public HeldClaim {
 public:
  explicit HeldFlag(bool* held) : held_(held) { *held_ = true; }
  ~HeldFlag() override { *held_ = false; }

 private:
  bool* held_;
};

// A host over a FlakyStore: counts its claims, and has `while_waiting` (when set) stand for another
// process whose result is looked for again after it ran; counts the flushes after a store.
class ScriptedHost : public JitHost {
 public:
  explicit ScriptedHost(FlakyStore* store) : store_(*store) {}

  bool enabled() override { return true; }
  store::Store* store() override { return store_available ? &store_ : nullptr; }
  bool store_read_only() override { return read_only; }
  core::StatsDeltas& stats() override { return stats_; }
  Flight claim_or_wait(const keying::CacheKey&, const std::function<bool()>& result_ready) override {
    ++claims;
    Flight flight;
    if (while_waiting) {  // another call held the claim meanwhile
      while_waiting();
      flight.wait_ns = 1;
      if (result_ready()) return flight;  // served: no claim
    }
    flight.held = std::make_unique<HeldFlag>(&claim_held);
    return flight;
  }
  void flush_stats(bool stored) override { stores_flushed += stored ? 1 : 0; }

  // The total of counter `c` so far.
  std::int64_t count(core::Counter c) {
    for (const auto& [name, value] : stats_.take()) totals_[name] += value;
    return totals_[std::string(core::kCounterNames[static_cast<std::size_t>(c)])];
  }

  FlakyStore& store_;
  bool store_available = true;
  bool read_only = false;
  std::function<void()> while_waiting;
  int claims = 0;
  bool claim_held = false;
  int stores_flushed = 0;

 private:
  core::StatsDeltas stats_;
  std::map<std::string, std::int64_t> totals_;
};

}  // namespace nvrtc_cache::shim::testing
