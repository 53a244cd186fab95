// Program-name rule: whether the directory of a program's name can be left out of its key, so that
// the same program named by a fresh directory in each process (CuPy names every program
// /tmp/tmpXXXXXXXX/kern.cu) is a hit. Measured with NVRTC 12.9, 13.0 and 13.5 (the same program under three
// names, every output compared): the name reaches the outputs through the paths line info, debug
// info, LTO IR and OptiX IR embed (the options for which working_directory_use() is not kNone),
// through `__FILE__`-like macros in the texts (direct/program_name_scan.h), through diagnostics in
// the log, and through quoted includes searched in its directory. The key leaves the directory out
// only when the options embed no path; what the others decide is known after the compile, and a
// result that depends on the name is stored under the key with the directory (both are looked up).
// Contract: pure; no I/O; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "keying/working_directory_rule.h"

namespace nvrtc_cache::keying {

// True for an absolute name ("/dir/file.cu") compiled with options that embed no path.
bool program_directory_can_be_left_out(const std::optional<std::string>& program_name, WorkingDirectoryUse use);

// "/tmp/tmpab12cd34/" and "kern.cu" of "/tmp/tmpab12cd34/kern.cu".
std::string_view program_directory(std::string_view program_name);
std::string_view program_file_name(std::string_view program_name);

}  // namespace nvrtc_cache::keying
