#include "libraries/nvrtc/program_table.h"

#include "platform/fork_locks.h"

namespace nvrtc_cache::shim {

void ProgramTable::insert(nvrtcProgram handle, std::shared_ptr<ProgramRecord> record) {
  std::unique_lock lock(mu_);
  records_.insert_or_assign(handle, std::move(record));
}

std::shared_ptr<ProgramRecord> ProgramTable::find(nvrtcProgram handle) const {
  std::shared_lock lock(mu_);
  auto it = records_.find(handle);
  return it == records_.end() ? nullptr : it->second;
}

std::shared_ptr<const core::CompileEntry> ProgramTable::served_entry(nvrtcProgram handle) const {
  std::shared_lock lock(mu_);
  auto it = records_.find(handle);
  return it == records_.end() ? nullptr : it->second->served;
}

void ProgramTable::erase(nvrtcProgram handle) {
  std::unique_lock lock(mu_);
  records_.erase(handle);
}

void ProgramTable::renew_in_child() { platform::renew_in_child(mu_); }

ProgramTable& program_table() {
  static auto* table = new ProgramTable();  // leaked: usable from exit handlers and late threads
  return *table;
}

namespace {

__attribute__((constructor)) void register_fork_locks() {
  platform::join_fork_order_of<&program_table>(platform::ForkRank::kProgramTable);
}

}  // namespace

}  // namespace nvrtc_cache::shim
