// nvrtc-cache.exe, the Windows CLI: the commands of tools/commands.h that Windows has, on the shared
// command line (tools/command_line.h), with the proxy's settings and store (core/config.h,
// %LOCALAPPDATA%\nvrtc-cache by default). Not here (docs/platforms.md): doctor (Linux's checks of the
// preload, the toolkit and the filesystem), remote, export, import and copy (the shared tiers, which
// the port has not), replay (POSIX worker processes), and the hidden sample compile doctor runs.
#include "tools/command_line.h"

namespace {

using namespace nvrtc_cache::tools;

void add_commands(CLI::App& app, Outcome& outcome) {
  add_stats_command(app, outcome);
  add_clear_command(app, outcome);
  add_evict_command(app, outcome);
  add_verify_command(app, outcome);
  add_config_command(app, outcome);
  add_ls_command(app, outcome);
  add_inspect_command(app, outcome);
  add_extract_command(app, outcome);
  add_help_command(app, outcome);
}

}  // namespace

int main(int argc, char** argv) {
  return run_command_line({.cache_location = "%NVRTC_CACHE_DIR% (default %LOCALAPPDATA%\\nvrtc-cache)",
                           .add_commands = add_commands},
                          argc, argv);
}
