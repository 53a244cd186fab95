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
