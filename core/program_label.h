// What a program is called wherever a person reads about it: `ls`, `stats`, `inspect`, `export
// --match` and the log all use these labels, so a name seen in one finds the entry in the others.
// A given program name is kept unless it says nothing (empty, "default_program", a path: CuPy compiles
// in a temporary directory); then the first name expression it asked for, the first kernel its PTX
// defines, a path's file name or its options stand in. Contract: pure functions of their arguments;
// thread-safe; never throw but std::bad_alloc.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace nvrtc_cache::core {

// True for a name that tells a person nothing: empty, "default_program" or a path.
bool name_says_nothing(std::string_view name);

// The first kernel (".entry NAME(") a PTX text defines, demangled without its parameters
// ("scale<float, 2>"); "" when it defines none.
std::string first_ptx_kernel(std::string_view ptx);

// Whether an NVRTC program's label comes from its PTX (no telling name, no name expression): a
// caller reads the PTX only then.
bool nvrtc_label_needs_ptx(std::string_view name, std::span<const std::string> name_expressions);

// An NVRTC program's label. `name` is empty for a program created without one; `ptx` may be empty
// (not known yet, or not an output).
std::string nvrtc_program_label(std::string_view name, std::span<const std::string> name_expressions,
                                std::string_view ptx, std::span<const std::string> options);

// Whether a link's or a libNVVM compile's label comes from its output's PTX (libNVVM modules without
// names).
bool handle_label_needs_ptx(std::span<const std::string> input_names, bool is_nvvm);

// A link's or a libNVVM compile's label: "KIND: NAME, NAME" by its inputs' names ("(unnamed)" for
// one without), or for libNVVM modules that have none the first kernel of `ptx` (its output).
std::string handle_label(std::string_view kind, std::span<const std::string> input_names, bool is_nvvm,
                         std::string_view ptx);

}  // namespace nvrtc_cache::core
