#include "core/replay_output.h"

#include <algorithm>
#include <cstring>

namespace nvrtc_cache::core {

// An output the entry does not hold is never asked for (the shim serves only entries that hold every
// output of the caller's NVRTC); answered as for a program NVRTC does not know, should it be.
nvrtcResult replay_size(const RecordedOutput& out, size_t* size) {
  if (!out.available) return NVRTC_ERROR_INVALID_PROGRAM;
  if (size == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  if (out.size_written) *size = static_cast<size_t>(out.size);
  return static_cast<nvrtcResult>(out.size_rc);
}

nvrtcResult replay_data(const RecordedOutput& out, char* data) {
  if (!out.available) return NVRTC_ERROR_INVALID_PROGRAM;
  if (data == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  // The host sized its buffer from replay_size: never write past what it reported (decode already
  // refuses an entry whose size and bytes disagree; this holds even if one got through).
  const std::size_t reported = out.size_written ? static_cast<std::size_t>(out.size) : 0;
  const std::size_t length = std::min(out.bytes.size(), reported);
  if (out.data_rc == NVRTC_SUCCESS && length > 0) std::memcpy(data, out.bytes.data(), length);
  return static_cast<nvrtcResult>(out.data_rc);
}

nvrtcResult replay_lowered_name(const RecordedLoweredName& name, const char** lowered_name) {
  if (name.written) *lowered_name = name.is_null ? nullptr : name.lowered.c_str();
  return static_cast<nvrtcResult>(name.rc);
}

}  // namespace nvrtc_cache::core
