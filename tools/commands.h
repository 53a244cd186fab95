// The nvrtc-cache command's subcommands: each add_*_command() registers one subcommand (its
// options and --help text) on the CLI11 app and sets `outcome.exit_code` when it runs. Output goes
// to stdout, diagnostics to stderr. The same definitions drive --help, the man page and the bash
// completion (tools/commands/help_command.cc). Contract: single-threaded; run once per process.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <memory>
#include <string>

// The version CMake's project() declares (CMakeLists.txt), passed in as a definition.
#ifndef NVRTC_CACHE_VERSION
#define NVRTC_CACHE_VERSION "unknown"
#endif

namespace nvrtc_cache::tools {

inline constexpr const char* kVersion = NVRTC_CACHE_VERSION;
// Every line of help this command prints is at most this wide.
inline constexpr std::size_t kHelpColumns = 80;

struct Outcome {
  int exit_code = 0;
};

void add_run_command(CLI::App& app, Outcome& outcome);
// The options every system's `run` shares, for its --help (--record FILE, CMD): `run` parses its own
// arguments before CLI11 does (tools/commands/run_command.cc, tools/windows/run_command.cc).
void add_run_shared_options(CLI::App& run);
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
// export, import and copy (tools/commands/archive_command.cc).
void add_archive_commands(CLI::App& app, Outcome& outcome);
// replay, and its hidden __replay-worker.
void add_replay_command(CLI::App& app, Outcome& outcome);
void add_help_command(CLI::App& app, Outcome& outcome);
// Hidden: compiles a tiny kernel through whatever NVRTC the process reaches (doctor runs it).
void add_sample_compile_command(CLI::App& app, Outcome& outcome);

// `nvrtc-cache run` takes another program's arguments verbatim; main() dispatches it before CLI11.
int run_command(int argc, char** argv);

// --compact's help (clear, evict), and what a compaction did or why not (stdout/stderr); the exit
// status: 0 when the file was compacted (or there was none), 1 when it was not.
inline constexpr const char* kCompactHelp =
    "then rewrite the store's file without its free pages, so that it shrinks; refused while another process "
    "has the cache open";
struct Compaction;
int report_compaction(const Compaction& compaction);

// Prints "nvrtc-cache <command>: <message>", the command's usage line and where its help is to
// stderr; returns 2.
int usage_error(const CLI::App& command, const std::string& message);

// The subcommand of `app` named `name` (hidden ones too), or nullptr.
const CLI::App* find_subcommand(const CLI::App& app, const std::string& name);
// "nvrtc-cache stats", "nvrtc-cache config set": the command as typed.
std::string command_path(const CLI::App& command);
// `text` with every line longer than `columns` wrapped at spaces, continuation lines indented like
// the text of the line they continue (an option's or a command's description column).
std::string fit_to_columns(const std::string& text, std::size_t columns = kHelpColumns);
// The help formatter of every command: CLI11's, fitted to kHelpColumns.
std::shared_ptr<CLI::FormatterBase> help_formatter();
// "nvrtc-cache help": every visible command, one line each.
std::string command_overview(const CLI::App& app);

}  // namespace nvrtc_cache::tools
