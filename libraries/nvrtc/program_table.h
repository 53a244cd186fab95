// ProgramTable: the side table from a real NVRTC program handle to what the shim recorded about it
// (its inputs, and the cache entry that answers its getters once a compile was served).
// Contract: thread-safe (one shared mutex; lookups take it shared); records are shared_ptr so a
// concurrent destroy never frees one in use. Like NVRTC, concurrent calls on the SAME program are
// the host's responsibility; calls on different programs are independent. Fork: the mutex is
// platform::ForkRank::kProgramTable (platform/fork_locks.h); a child keeps the parent's records.
#pragma once

#include <nvrtc.h>

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "core/compile_entry.h"
#include "keying/program_inputs.h"

namespace nvrtc_cache::shim {

struct ProgramRecord {
  keying::ProgramInputs inputs;
  bool capturable = true;                            // false: some input could not be captured (e.g. a NULL header)
  bool has_flow_callback = false;                    // the host wants callbacks during compile: never served
  std::shared_ptr<const core::CompileEntry> served;  // set while the last compile was served from cache
};

class ProgramTable {
 public:
  void insert(nvrtcProgram handle, std::shared_ptr<ProgramRecord> record);
  std::shared_ptr<ProgramRecord> find(nvrtcProgram handle) const;
  // The record if the program's last compile was served from the cache (the common getter check).
  std::shared_ptr<const core::CompileEntry> served_entry(nvrtcProgram handle) const;
  void erase(nvrtcProgram handle);

  // The fork handlers (platform/fork_locks.h).
  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child();

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<nvrtcProgram, std::shared_ptr<ProgramRecord>> records_;
};

ProgramTable& program_table();

}  // namespace nvrtc_cache::shim
