// ProgramInputs: everything a program passed to NVRTC that can change what NVRTC returns, as captured
// at the C API, plus the identity of the NVRTC library that compiled it.
// Contract: a plain value type; no I/O; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "keying/working_directory_rule.h"

namespace nvrtc_cache::keying {

// Which NVRTC build a program belongs to: patch releases report the same nvrtcVersion, so the GNU
// build-id of the loaded object is part of the identity.
struct LibraryIdentity {
  int major = 0;
  int minor = 0;
  std::string build_id;  // raw bytes of NT_GNU_BUILD_ID; empty when the object has none
};

struct InMemoryHeader {
  std::string include_name;
  std::string content;
};

struct ProgramInputs {
  LibraryIdentity library;
  std::optional<std::string> name;  // nullopt: the program was created with a NULL name
  std::string source;
  std::vector<InMemoryHeader> headers;        // in the order given to nvrtcCreateProgram
  std::vector<std::string> options;           // in the order given to nvrtcCompileProgram
  std::vector<std::string> name_expressions;  // in order of nvrtcAddNameExpression calls
  // NVRTC writes the program's path, resolved against the working directory (getcwd()), into line
  // info, debug info and LTO/OptiX IR: the directory and $PWD are keyed where
  // working_directory_use() says the outputs depend on it (kAlways), and left out otherwise.
  std::string working_directory;
  std::optional<std::string> pwd_variable;
  WorkingDirectoryUse working_directory_use = WorkingDirectoryUse::kAlways;
  // False when the key holds only the file name of an absolute program name
  // (keying/program_name_rule.h): a result that turns out to depend on the name is stored under the
  // key with it (compute_key() of a copy with this true).
  bool program_directory_in_key = true;
};

}  // namespace nvrtc_cache::keying
