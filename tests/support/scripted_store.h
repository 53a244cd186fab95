// What the lifecycle tests (compile_lifecycle_test.cc, handle_lifecycle_test.cc) script around the
// lifecycle: a memory store whose writes can be made to fail and whose entries can be hidden (as
// if another process had not stored them yet), and a claim that says while it is held.
// Contract: single-threaded test helpers; no filesystem access.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

}  // namespace nvrtc_cache::shim::testing
