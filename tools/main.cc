// nvrtc-cache: run programs with the cache, and inspect, configure, check or clear it.
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/commands.h"

namespace nvrtc_cache::tools {

int usage_error(const CLI::App& command, const std::string& message) {
  std::string path = command.get_name();
  for (const CLI::App* parent = command.get_parent(); parent != nullptr; parent = parent->get_parent()) {
    path = parent->get_name() + " " + path;
  }
  std::fprintf(stderr, "%s: %s\nusage: %s [OPTIONS]%s\n\n%s", path.c_str(), message.c_str(), path.c_str(),
               command.get_subcommands([](const CLI::App*) { return true; }).empty() ? "" : " COMMAND", command.help().c_str());
  return 2;
}

}  // namespace nvrtc_cache::tools

int main(int argc, char** argv) {
  using namespace nvrtc_cache::tools;
  // `run`'s arguments are another program's: they are never parsed here (only `run --help` is).
  if (argc >= 2 && std::strcmp(argv[1], "run") == 0 &&
      !(argc >= 3 && (std::strcmp(argv[2], "--help") == 0 || std::strcmp(argv[2], "-h") == 0))) {
    return run_command(argc - 2, argv + 2);
  }
  CLI::App app{"nvrtc-cache: a drop-in cache for NVIDIA's runtime compiler (NVRTC)", "nvrtc-cache"};
  app.require_subcommand(1);
  app.footer(
      "The cache lives in $NVRTC_CACHE_DIR (default $XDG_CACHE_HOME/nvrtc-cache or ~/.cache/nvrtc-cache); "
      "`nvrtc-cache config` shows every setting and where it comes from.");
  Outcome outcome;
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    const CLI::App* failed = &app;
    for (CLI::App* sub : app.get_subcommands()) failed = sub;
    return usage_error(*failed, error.what());
  }
  return outcome.exit_code;
}
