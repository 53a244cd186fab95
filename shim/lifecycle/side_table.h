// SideTable<Handle, Record>: the side table from a real JIT library's handle (an nvrtcProgram, an
// nvJitLinkHandle, an nvvmProgram) to what the shim recorded about it: its inputs, and the entry that
// answers its getters while its last completing call was served (Record::served). Every library's
// records live in one of these (libraries/nvrtc/program_table.h, shim/lifecycle/handle_table.h).
// Contract: thread-safe (one shared mutex; lookups take it shared); records are shared_ptr so a
// concurrent destroy never frees one in use. Like the libraries, concurrent calls on the SAME handle
// are the host's responsibility; calls on different handles are independent. Fork: each instance's
// mutex joins the fork order at its own rank (platform/fork_locks.h); a child keeps the parent's
// records. A null handle is never recorded.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

#include "platform/fork_locks.h"

namespace nvrtc_cache::shim {

template <typename Handle, typename Record>
class SideTable {
 public:
  using Served = decltype(std::declval<const Record&>().served);

  void insert(Handle handle, std::shared_ptr<Record> record) {
    std::unique_lock lock(mu_);
    records_.insert_or_assign(handle, std::move(record));
  }
  std::shared_ptr<Record> find(Handle handle) const {
    if (handle == Handle{}) return nullptr;
    std::shared_lock lock(mu_);
    auto it = records_.find(handle);
    return it == records_.end() ? nullptr : it->second;
  }
  // The entry that answers `handle`'s getters if its last completing call was served (the common
  // getter check), else null.
  Served served_entry(Handle handle) const {
    std::shared_lock lock(mu_);
    auto it = records_.find(handle);
    return it == records_.end() ? nullptr : it->second->served;
  }
  void erase(Handle handle) {
    std::unique_lock lock(mu_);
    records_.erase(handle);
  }

  // The fork handlers (platform/fork_locks.h).
  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child() { platform::renew_in_child(mu_); }

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<Handle, std::shared_ptr<Record>> records_;
};

}  // namespace nvrtc_cache::shim
