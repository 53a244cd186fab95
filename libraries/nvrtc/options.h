// Option table: every nvrtcCompileProgram option the cache knows, per NVRTC version, with its effect
// on what a compile does beyond returning its outputs. Taken from the option list of each NVRTC's
// nvrtc.h (12.9 and 13.0 document the same 57 options, 13.5 adds 14; two more, -Xcudafe and -Xnvvm,
// are accepted by all three without being documented) and from how NVRTC parses them
// (measured with 13.0: "-arch sm_80" as two options is accepted, a value-taking option given without
// "=" takes the next option as its value). An option is known for an NVRTC when the table has it
// since that NVRTC's version or an earlier one; a newer NVRTC is assumed to keep what older ones
// meant (NVRTC has only ever added options). An option the table does not know for that NVRTC makes
// the compile uncacheable: it could add an output the shim does not capture, or a side effect.
// Contract: pure; no I/O; thread-safe; never throws except std::bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nvrtc_cache::keying {

enum class OptionEffect : std::uint8_t {
  kPlain,           // changes only the outputs (keyed with every option)
  kPaths,           // embeds the working directory or file paths in outputs (keying/working_directory_rule.h)
  kExtraOutput,     // adds an output kind the shim captures (LTO-IR, OptiX-IR, Tile IR)
  kBundledHeaders,  // installs NVRTC's bundled headers into its value, a directory (libraries/nvrtc/bundled_headers.h)
  kSideEffect,      // writes files, or depends on the process (PCH, time traces)
};

enum class OptionValue : std::uint8_t {
  kNone,      // a flag: "--restrict"
  kRequired,  // "--name=value", or the next option is its value ("-arch sm_80")
  kAttached,  // as kRequired, or attached to a one-letter short name ("-DNAME", "-I/dir")
  kEquals,    // only as "--name=value" (NVRTC 13.5 rejects "--use-bundled-headers" and "-use-bundled-headers=d")
};

struct NvrtcVersion {
  int major = 0;
  int minor = 0;
  friend constexpr bool operator<=(NvrtcVersion a, NvrtcVersion b) {
    return a.major < b.major || (a.major == b.major && a.minor <= b.minor);
  }
};

struct KnownOption {
  std::string_view long_name;   // without dashes: "gpu-architecture"
  std::string_view short_name;  // without dashes: "arch"; empty when it has none
  OptionValue value;
  OptionEffect effect;
  NvrtcVersion since;  // the first NVRTC whose nvrtc.h documents it (12.0: every 12.x and 13.x)
};

// The whole table, in nvrtc.h's order.
std::span<const KnownOption> known_options();
// How many options the table knows for an NVRTC of `version`.
std::size_t known_option_count(NvrtcVersion version);

// What an option list asks of an NVRTC of `version`.
struct OptionScan {
  std::optional<std::string> unknown;        // the first option the table does not know for it
  std::optional<std::string> side_effect;    // the first option with a side effect
  bool extra_output = false;                 // some option adds an output kind
  std::vector<std::string> bundled_headers;  // the directories --use-bundled-headers= names, in order
};

OptionScan scan_options(std::span<const std::string_view> options, NvrtcVersion version);
// The program's options, then NVRTC_APPEND_FLAGS' (`append_flags`, nullopt when unset), which NVRTC
// appends; append flags that cannot be split (split_append_flags) count as an unknown option.
OptionScan scan_compile_options(std::span<const std::string_view> options,
                                const std::optional<std::string_view>& append_flags, NvrtcVersion version);
// NVRTC_APPEND_FLAGS split at white space; nullopt if it holds quotes or escapes (how NVRTC would
// split those is not measured).
std::optional<std::vector<std::string_view>> split_append_flags(std::string_view flags);

}  // namespace nvrtc_cache::keying
