// The encoding of one RecordedOutput, shared by the entry formats (core/compile_entry.h,
// core/link_entry.h). Contract: pure; read_output() fails (false) on truncated input and allocates
// no more than the input holds.
#pragma once

#include "core/compile_entry.h"
#include "util/binary_io.h"

namespace nvrtc_cache::core {

void write_output(util::ByteWriter& w, const RecordedOutput& o);
bool read_output(util::ByteReader& r, RecordedOutput& o);

}  // namespace nvrtc_cache::core
