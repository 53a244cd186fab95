// BoundedWrites: a Store whose writes (put, erase, clear, add_counters, close) run on a background
// writer thread, each waited for at most a bound, so that no caller — a host's compile, the
// statistics merge at its exit — waits without end on another process's write transaction (LMDB has
// one writer at a time: a process stopped inside one, by SIGSTOP or a debugger, would block every
// other writer). Reads go straight to the wrapped store (LMDB readers never wait for the writer).
// A write not done within the bound is reported as failed (the caller fails open: the result is not
// stored, the counters stay for a later merge) and still completes when the lock frees; while one is
// that late, later writes are queued without waiting.
// Contract (threads): thread-safe; jobs run one at a time, in order, on one writer per process
// (store::remote::WriteBehind, fork rank platform::ForkRank::kLocalWrites); a job owns copies of its
// keys and values. Contract (fork): a child starts its own writer lazily and drops the jobs it
// inherited (the parent runs them). Never throws; errno is preserved.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

#include "store/store.h"

namespace nvrtc_cache::store {

class BoundedWrites final : public Store {
 public:
  BoundedWrites(std::unique_ptr<Store> inner, std::chrono::milliseconds bound);

  std::optional<std::string> get(std::string_view key) override { return inner_->get(key); }
  Status put(std::string_view key, std::string_view value) override;
  Status erase(std::string_view key) override;
  std::uint64_t entry_count() override { return inner_->entry_count(); }
  std::uint64_t size_bytes() override { return inner_->size_bytes(); }
  Status clear() override;
  void close() override;
  Status add_counters(const Counters& deltas) override;
  Counters counters() override { return inner_->counters(); }
  CounterFile* counter_file() override { return inner_->counter_file(); }
  std::uint64_t corrupt_entries_dropped() const override { return inner_->corrupt_entries_dropped(); }
  bool was_evicted(std::string_view key) override { return inner_->was_evicted(key); }
  std::uint64_t stores_quarantined() const override { return inner_->stores_quarantined(); }
  std::uint64_t directories_recreated() const override { return inner_->directories_recreated(); }

  // Writes that were not done within the bound, by this process (monotonic).
  std::uint64_t writes_late() const { return late_.load(std::memory_order_relaxed); }

 private:
  Status run(std::function<Status(Store&)> write, std::size_t bytes);

  std::shared_ptr<Store> inner_;
  const std::chrono::milliseconds bound_;
  std::shared_ptr<std::atomic<int>> overdue_;  // writes queued past their bound and not done yet
  std::atomic<std::uint64_t> late_{0};
};

}  // namespace nvrtc_cache::store
