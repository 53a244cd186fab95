// `nvrtc-cache replay`'s pieces shared by the command (tools/replay_command.cc) and its workers
// (tools/replay_worker.cc, processes with the shim preloaded, so each compile is keyed and stored by
// the shim's own code, exactly as the app's would be). A recording is untrusted input: its library is
// checked before it is loaded (tools/nvrtc_library_check.h), its options before anything is compiled
// (replay_option_refusal), both in the command and again in each worker; its paths are data, never
// opened for writing.
// Contract: single-threaded; the worker changes its working directory and $PWD per program.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/compile_record.h"

namespace nvrtc_cache::tools {

// One compile of a recorded program: as recorded, or with the architecture rewritten.
struct ReplayVariant {
  std::string label;  // "as recorded", or the architecture value ("sm_90", "compute_100a")
  std::vector<std::string> options;
};

// As recorded first, then one per requested architecture (parse_arch_request() form) whose options
// differ from every earlier variant's.
std::vector<ReplayVariant> replay_variants(const core::CompileRecord& record, const std::vector<std::string>& archs);

// Why a program compiled by `library` with `options` must not be replayed, or "": an option holding a
// NUL byte, an option with a side effect (it reads or writes files beyond the compile's inputs: a
// recording's paths are never written) or one the option table (keying/option_table.h) does not know
// for that NVRTC version (a genuine recording holds none: such compiles are not cached); and -Xnvvm, or
// -Xcudafe with anything but a diagnostic control, whose values NVRTC's internal tools take (some
// write files).
// `append_flags` is NVRTC_APPEND_FLAGS (nullptr when unset), which NVRTC appends to every compile.
std::string replay_option_refusal(const std::vector<std::string>& options, const keying::LibraryIdentity& library,
                                  const char* append_flags);

// What a worker reports for one variant: "stored", "cached" (already a hit), "failed", "skipped",
// "refused".
struct ReplayOutcome {
  std::size_t program = 0;  // index in the worker's task file
  std::size_t variant = 0;
  std::string status;
  std::string detail;
};
// One line of a worker's stdout, and back.
std::string format_outcome(const ReplayOutcome& outcome);
bool parse_outcome(std::string_view line, ReplayOutcome& outcome);

// The worker: compiles every program of `task_file` (a record file) for `archs`, through the NVRTC
// each names, writing one outcome line per variant to stdout. `log_file` is the shim's debug log
// (NVRTC_CACHE_LOG_FILE), read after each compile to tell stored, cached and not stored apart.
int run_replay_worker(const std::string& task_file, const std::vector<std::string>& archs, const std::string& log_file);

}  // namespace nvrtc_cache::tools
