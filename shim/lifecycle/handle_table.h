// HandleTable: the side table from a real handle of a handle-based JIT library (an nvJitLinkHandle, an
// nvvmProgram) to what the shim recorded about it: its inputs, and the entry that answers its getters
// once its completing call was served (shim/lifecycle/handle_lifecycle.h).
// Contract: SideTable's (shim/lifecycle/side_table.h); its fork rank is platform::ForkRank::kHandleTable.
#pragma once

#include <memory>
#include <string>

#include "core/handle_entry.h"
#include "core/stats.h"
#include "keying/handle_inputs.h"
#include "shim/lifecycle/side_table.h"

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

using HandleTable = SideTable<const void*, HandleRecord>;

HandleTable& handle_table();

}  // namespace nvrtc_cache::shim
