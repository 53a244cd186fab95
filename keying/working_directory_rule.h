// Working-directory rule: whether what NVRTC returns for a program depends on the directory it was
// compiled in, decided from the options (the program's, then NVRTC_APPEND_FLAGS', which NVRTC reads
// and appends) and the program name. Derived from measurements with NVRTC 13.0 (the same program
// compiled from two directories, every output compared): debug info, LTO IR and OptiX IR embed the
// directory; line info embeds the path of every file it names, resolved against the directory when
// that path is relative; nothing else does ($PWD, the variable, never does). An option the rule does
// not know keeps the directory in the key.
// Contract: pure; no I/O; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nvrtc_cache::keying {

enum class WorkingDirectoryUse : std::uint8_t {
  // The outputs never depend on it: the key leaves it (and $PWD) out, and paths NVRTC used relative
  // to it are recorded relative and validated against the directory of the lookup.
  kNone = 0,
  // Line info with an absolute program name: the outputs embed the directory only through a file
  // read through a relative path (a relative -I, --pre-include...). The key leaves it out; a
  // compile that read a file through a relative path pins its result to the directory.
  kThroughFoundRelativePaths = 1,
  // The outputs embed it (or an option is not known): the directory and $PWD are in the key.
  kAlways = 2,
};

// `program_name`: nullopt for a NULL name (NVRTC then names the program "default_program").
// `append_flags`: NVRTC_APPEND_FLAGS' value, nullopt when it is not set.
WorkingDirectoryUse working_directory_use(std::span<const std::string> options,
                                          const std::optional<std::string>& program_name,
                                          const std::optional<std::string_view>& append_flags);

}  // namespace nvrtc_cache::keying
