// The nvrtc-cache command's subcommands. Each returns the process exit code; output goes to
// stdout, diagnostics to stderr.
#pragma once

namespace nvrtc_cache::tools {

// nvrtc-cache run [--] CMD ARGS...: runs CMD with the shim preloaded (replaces this process).
int run_command(int argc, char** argv);
// nvrtc-cache stats [--json]
int stats_command(int argc, char** argv);
// nvrtc-cache clear
int clear_command(int argc, char** argv);
// nvrtc-cache evict [--max-size S] [--older-than D]
int evict_command(int argc, char** argv);

// nvrtc-cache verify: checks every entry and reports; exit status 1 if any is damaged.
int verify_command(int argc, char** argv);

}  // namespace nvrtc_cache::tools
