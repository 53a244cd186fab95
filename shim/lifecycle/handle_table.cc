#include "shim/lifecycle/handle_table.h"

#include <mutex>
#include <utility>

#include "platform/fork_locks.h"

namespace nvrtc_cache::shim {

void not_capturable(HandleRecord& record, std::string why, core::Counter reason) {
  if (record.capturable) {
    record.why_not = std::move(why);
    record.why_not_reason = reason;
  }
  record.capturable = false;
}

void HandleTable::insert(const void* handle, std::shared_ptr<HandleRecord> record) {
  std::unique_lock lock(mu_);
  records_[handle] = std::move(record);
}

std::shared_ptr<HandleRecord> HandleTable::find(const void* handle) const {
  if (handle == nullptr) return nullptr;
  std::shared_lock lock(mu_);
  auto it = records_.find(handle);
  return it == records_.end() ? nullptr : it->second;
}

void HandleTable::erase(const void* handle) {
  std::unique_lock lock(mu_);
  records_.erase(handle);
}

void HandleTable::renew_in_child() { platform::renew_in_child(mu_); }

HandleTable& handle_table() {
  static auto* table = new HandleTable();  // leaked: usable from exit handlers
  return *table;
}

namespace {
__attribute__((constructor)) void register_fork_locks() {
  platform::join_fork_order_of<&handle_table>(platform::ForkRank::kHandleTable);
}
}  // namespace

}  // namespace nvrtc_cache::shim
