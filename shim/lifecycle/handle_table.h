// HandleTable: the side table from a real handle of a handle-based JIT library (an nvJitLinkHandle, an
// nvvmProgram) to what the shim recorded about it: its inputs, and the entry that answers its getters
// once its completing call was served (shim/lifecycle/handle_lifecycle.h).
// Contract: thread-safe (one shared mutex); records are shared_ptr so a concurrent destroy never
// frees one in use. Like the libraries, concurrent calls on the SAME handle are the host's
// responsibility. Fork: the mutex is platform::ForkRank::kHandleTable; a child keeps the parent's records.
#pragma once

#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "core/handle_entry.h"
#include "core/stats.h"
#include "keying/handle_inputs.h"

namespace nvrtc_cache::shim {

struct HandleRecord {
  core::JitLibrary library = core::JitLibrary::nvjitlink;
  keying::HandleInputs inputs;
  bool capturable = true;  // false: an input could not be captured or an Add call failed
  std::string why_not;     // why not capturable, for the log
  core::Counter why_not_reason = core::Counter::uncacheable_inputs;  // and for the statistics (NVRTC's row)
  bool completed = false;  // the completing call was made (served or not): a later one goes to the library
  std::shared_ptr<const core::HandleEntry> served;  // set while the last completing call was served
};

// Marks `record` uncacheable, keeping the first reason (`reason`: NVRTC's row of it, core/stats.h).
void not_capturable(HandleRecord& record, std::string why, core::Counter reason = core::Counter::uncacheable_inputs);

class HandleTable {
 public:
  void insert(const void* handle, std::shared_ptr<HandleRecord> record);
  std::shared_ptr<HandleRecord> find(const void* handle) const;
  void erase(const void* handle);

  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child();

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<const void*, std::shared_ptr<HandleRecord>> records_;
};

HandleTable& handle_table();

}  // namespace nvrtc_cache::shim
