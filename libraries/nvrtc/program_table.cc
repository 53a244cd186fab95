#include "libraries/nvrtc/program_table.h"

#include "platform/fork_locks.h"

namespace nvrtc_cache::shim {

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
