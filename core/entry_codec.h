// The encodings of one RecordedOutput and of a list of strings, shared by the entry formats (core/compile_entry.h,
// core/link_entry.h). Contract: pure; read_output() fails (false) on truncated input and allocates
// no more than the input holds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/compile_entry.h"
#include "util/binary_io.h"

namespace nvrtc_cache::core {

void write_output(util::ByteWriter& w, const RecordedOutput& o);
bool read_output(util::ByteReader& r, RecordedOutput& o);
// A count, then each string.
void write_strings(util::ByteWriter& w, const std::vector<std::string>& strings);
bool read_strings(util::ByteReader& r, std::vector<std::string>& strings);
// Whether there is one, then its major, minor and build-id.
void write_library(util::ByteWriter& w, const std::optional<LibraryVersion>& library);
bool read_library(util::ByteReader& r, std::optional<LibraryVersion>& library);

}  // namespace nvrtc_cache::core
