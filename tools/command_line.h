// The nvrtc-cache command line every system's main runs: ccache's short options, the commands that
// system has (one add_*_command line each, tools/commands.h), the "did you mean" of an unknown
// command, --help, usage errors (exit status 2) and the exit status the command set. `run` (when the
// system has it) is dispatched before CLI11: its arguments are another program's.
// Output that cannot be written ends the command, never the process by an abort: a reader gone
// away (EPIPE, with SIGPIPE ignored) is exit status 141, said nowhere; any other write error is 1,
// said once on stderr (fmt::print's exceptions and the final flush of stdout alike).
// Contract: single-threaded; run once per process; output on stdout, diagnostics on stderr; never
// throws.
#pragma once

#include "tools/commands.h"

namespace nvrtc_cache::tools {

struct CommandLine {
  // Where the cache lives by default, said under --help: "$NVRTC_CACHE_DIR (default ...)".
  const char* cache_location;
  // Registers every command this system has.
  void (*add_commands)(CLI::App& app, Outcome& outcome);
  // `run`, given the arguments after it; nullptr where the system has none.
  int (*run)(int argc, char** argv) = nullptr;
};

// Parses argv and runs the command it names; returns the process's exit status.
int run_command_line(const CommandLine& line, int argc, char** argv);

}  // namespace nvrtc_cache::tools
