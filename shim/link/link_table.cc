#include "shim/link/link_table.h"

#include <mutex>
#include <utility>

#include "platform/fork_locks.h"

namespace nvrtc_cache::shim {

void LinkTable::insert(nvJitLinkHandle handle, std::shared_ptr<LinkRecord> record) {
  std::unique_lock lock(mu_);
  records_[handle] = std::move(record);
}

std::shared_ptr<LinkRecord> LinkTable::find(nvJitLinkHandle handle) const {
  std::shared_lock lock(mu_);
  auto it = records_.find(handle);
  return it == records_.end() ? nullptr : it->second;
}

void LinkTable::erase(nvJitLinkHandle handle) {
  std::unique_lock lock(mu_);
  records_.erase(handle);
}

void LinkTable::renew_in_child() { platform::renew_in_child(mu_); }

LinkTable& link_table() {
  static auto* table = new LinkTable();  // leaked: usable from exit handlers
  return *table;
}

namespace {
__attribute__((constructor)) void register_fork_locks() {
  platform::join_fork_order_of<&link_table>(platform::ForkRank::kLinkTable);
}
}  // namespace

}  // namespace nvrtc_cache::shim
