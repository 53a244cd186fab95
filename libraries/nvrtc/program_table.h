// ProgramTable: NVRTC's side table (shim/lifecycle/side_table.h), from a real program handle to what
// the shim recorded about it (its inputs, and the cache entry that answers its getters once a compile
// was served). Contract: SideTable's; its fork rank is platform::ForkRank::kProgramTable.
#pragma once

#include <nvrtc.h>

#include <memory>

#include "core/compile_entry.h"
#include "keying/program_inputs.h"
#include "shim/lifecycle/side_table.h"

namespace nvrtc_cache::shim {

struct ProgramRecord {
  keying::ProgramInputs inputs;
  bool capturable = true;                            // false: some input could not be captured (e.g. a NULL header)
  bool has_flow_callback = false;                    // the host wants callbacks during compile: never served
  std::shared_ptr<const core::CompileEntry> served;  // set while the last compile was served from cache
};

using ProgramTable = SideTable<nvrtcProgram, ProgramRecord>;

ProgramTable& program_table();

}  // namespace nvrtc_cache::shim
