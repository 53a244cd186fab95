// ProgramNameScan: whether a compile's texts can make its outputs depend on the program's name
// through the preprocessor, so that a result compiled under one name may be served under another
// with the same file name in another directory (CuPy names every program by a fresh temporary
// directory). What brings the name in, measured with NVRTC 12.9, 13.0 and 13.5:
//   - `__FILE__` and NVRTC's builtin `assert` (its only builtin macro that uses `__FILE__`) expand to
//     the program's name where they appear in the program's source, and so does any macro whose
//     definition reaches them, wherever it is defined;
//   - `__BASE_FILE__` expands to it anywhere (outside a directive, or through a macro reaching it);
//   - `__builtin_FILE()` / `__builtin_source_location()` (or a macro reaching them) as a function's
//     default argument name the caller's file: the function counts where the source calls it (by its
//     name: libcu++'s `source_location::current`); as another initializer (a template parameter's or
//     a member's default) they count wherever they are.
// Everything else a header says about its own file (`__FILE__` or `assert` in its own code) names
// the header, which the dependencies already pin. Conservative by construction: identifiers are
// matched anywhere outside comments and literals, whatever the conditionals around them.
// Contract: pure; no I/O; thread-compatible; texts are untrusted and may be malformed.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace nvrtc_cache::direct {

class ProgramNameScan {
 public:
  // The program's source.
  void add_source(std::string_view text);
  // An in-memory header, a header file NVRTC read, or a pre-included file.
  void add_header(std::string_view text);
  // A macro defined on the command line (-D NAME=BODY; `definition` is what follows -D).
  void add_command_line_macro(std::string_view definition);
  // True if the outputs may depend on the program's name.
  bool reveals_program_name() const;

 private:
  void add_text(std::string_view text, bool is_source);
  void add_header_code(std::string_view code);
  void define(std::string_view directive_body);

  std::unordered_map<std::string, std::vector<std::string>> macro_bodies_;  // name -> identifiers in its bodies
  std::unordered_set<std::string> source_identifiers_;                      // every identifier of the source
  std::unordered_set<std::string> header_code_identifiers_;                 // headers, outside directives
  // Headers' code: identifiers in a default argument ("name(" where called), with the functions they
  // are one of; identifiers in another initializer.
  std::unordered_map<std::string, std::unordered_set<std::string>> default_argument_of_;
  std::unordered_set<std::string> initializer_identifiers_;
};

}  // namespace nvrtc_cache::direct
