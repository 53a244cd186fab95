// The nvrtc-cache command's subcommands: each add_*_command() registers one subcommand (its
// options and --help text) on the CLI11 app and sets `outcome.exit_code` when it runs. Output goes
// to stdout, diagnostics to stderr. The same definitions drive --help, the man page and the bash
// completion (tools/help_command.cc). Contract: single-threaded; run once per process.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nvrtc_cache::tools {

struct Outcome {
  int exit_code = 0;
};

void add_run_command(CLI::App& app, Outcome& outcome);
void add_stats_command(CLI::App& app, Outcome& outcome);
void add_clear_command(CLI::App& app, Outcome& outcome);
void add_evict_command(CLI::App& app, Outcome& outcome);
void add_verify_command(CLI::App& app, Outcome& outcome);
void add_config_command(CLI::App& app, Outcome& outcome);
void add_ls_command(CLI::App& app, Outcome& outcome);
void add_inspect_command(CLI::App& app, Outcome& outcome);
void add_extract_command(CLI::App& app, Outcome& outcome);
void add_doctor_command(CLI::App& app, Outcome& outcome);
void add_remote_command(CLI::App& app, Outcome& outcome);
// export, import and copy (tools/archive_command.cc).
void add_archive_commands(CLI::App& app, Outcome& outcome);
// replay, and its hidden __replay-worker.
void add_replay_command(CLI::App& app, Outcome& outcome);
void add_help_command(CLI::App& app, Outcome& outcome);
// Hidden: compiles a tiny kernel through whatever NVRTC the process reaches (doctor runs it).
void add_sample_compile_command(CLI::App& app, Outcome& outcome);

// `nvrtc-cache run` takes another program's arguments verbatim; main() dispatches it before CLI11.
int run_command(int argc, char** argv);

// Prints "nvrtc-cache <command>: <message>" and the command's usage to stderr; returns 2.
int usage_error(const CLI::App& command, const std::string& message);

}  // namespace nvrtc_cache::tools
