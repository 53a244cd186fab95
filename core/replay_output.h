// Replaying one recorded answer of a getter into the host's arguments, exactly as NVRTC answered
// when the entry was recorded.
// Contract: pure apart from writing through the host's pointers; thread-safe; never throws. A data
// replay never writes more than the size its size getter reported, whatever the entry holds.
#pragma once

#include <nvrtc.h>

#include <cstddef>

#include "core/compile_entry.h"

namespace nvrtc_cache::core {

nvrtcResult replay_size(const RecordedOutput& out, size_t* size);
nvrtcResult replay_data(const RecordedOutput& out, char* data);
nvrtcResult replay_lowered_name(const RecordedLoweredName& name, const char** lowered_name);

}  // namespace nvrtc_cache::core
