// nvrtc-cache on Linux: every command (tools/commands.h), on the shared command line
// (tools/command_line.h).
#include "tools/command_line.h"

namespace {

using namespace nvrtc_cache::tools;

void add_commands(CLI::App& app, Outcome& outcome) {
  add_run_command(app, outcome);
  add_stats_command(app, outcome);
  add_clear_command(app, outcome);
  add_evict_command(app, outcome);
  add_verify_command(app, outcome);
  add_config_command(app, outcome);
  add_ls_command(app, outcome);
  add_inspect_command(app, outcome);
  add_extract_command(app, outcome);
  add_doctor_command(app, outcome);
  add_remote_command(app, outcome);
  add_archive_commands(app, outcome);
  add_replay_command(app, outcome);
  add_help_command(app, outcome);
  add_sample_compile_command(app, outcome);
}

}  // namespace

int main(int argc, char** argv) {
  return run_command_line({.cache_location = "$NVRTC_CACHE_DIR (default $XDG_CACHE_HOME/nvrtc-cache or "
                                             "~/.cache/nvrtc-cache)",
                           .add_commands = add_commands,
                           .run = run_command},
                          argc, argv);
}
