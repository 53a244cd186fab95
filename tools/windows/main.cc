// nvrtc-cache.exe, the Windows CLI: the commands of tools/commands.h that Windows has, on the shared
// command line (tools/command_line.h), with the proxy's settings and store (core/config.h,
// %LOCALAPPDATA%\nvrtc-cache by default), and run (tools/windows/run_command.h: the program with the
// proxy injected), doctor with Windows' own checks (tools/doctor/doctor_command_windows.cc) and replay
// through the proxy (tools/replay/host_windows.cc). Not here (docs/platforms.md): compact.
#include "tools/command_line.h"
#include "tools/windows/run_command.h"

namespace {

using namespace nvrtc_cache::tools;

// run's place under --help; run_command_line dispatches run before any parsing.
void add_run_entry(CLI::App& app, Outcome&) {
  CLI::App* run =
      app.add_subcommand("run",
                         "Run CMD with its NVRTC calls served from the cache, whichever way it loads NVRTC (the proxy "
                         "is injected before CMD's code runs; CMD's children too). CMD's exit code is passed "
                         "through. Everything after CMD is CMD's own arguments.");
  add_run_shared_options(*run);
}

void add_commands(CLI::App& app, Outcome& outcome) {
  add_run_entry(app, outcome);
  add_stats_command(app, outcome);
  add_clear_command(app, outcome);
  add_evict_command(app, outcome);
  add_verify_command(app, outcome);
  add_config_command(app, outcome);
  add_ls_command(app, outcome);
  add_inspect_command(app, outcome);
  add_extract_command(app, outcome);
  add_archive_commands(app, outcome);
  add_remote_command(app, outcome);
  add_doctor_command(app, outcome);
  add_replay_command(app, outcome);
  add_sample_compile_command(app, outcome);
  add_help_command(app, outcome);
}

// run reads its arguments from the wide command line (Windows' own, not argv's code page).
int run_from_command_line(int, char**) { return windows::run_command(); }

}  // namespace

int main(int argc, char** argv) {
  return run_command_line({.cache_location = "%NVRTC_CACHE_DIR% (default %LOCALAPPDATA%\\nvrtc-cache)",
                           .add_commands = add_commands,
                           .run = run_from_command_line},
                          argc, argv);
}
