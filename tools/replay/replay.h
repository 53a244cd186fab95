// `nvrtc-cache replay`'s pieces shared by the command (tools/replay/replay_command.cc) and its worker
// processes (run with the shim preloaded, so each call is keyed and stored by the shim's own code,
// exactly as the app's would be): one worker, one loop over every recorded call's variants
// (report_variants), each library's calls made by its own file (tools/replay/worker.cc: NVRTC's
// compiles; tools/replay/handle_worker.cc: nvJitLink's links and libNVVM's compiles). A recording is untrusted input:
// its library is checked before it is loaded (tools/doctor/nvrtc_library_check.h), its options before anything is
// compiled (replay_option_refusal), both in the command and again in each worker; its paths are data, never opened for
// writing. Contract: single-threaded; the worker changes its working directory and $PWD per program.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/compile_record.h"
#include "core/handle_record.h"
#include "tools/replay/retarget.h"

namespace nvrtc_cache::tools {

// One compile of a recorded program: as recorded, or with the architecture rewritten.
struct ReplayVariant {
  std::string label;  // "as recorded", or the architecture value ("sm_90", "compute_100a")
  std::vector<std::string> options;
  std::string arch;  // the requested architecture (parse_arch_request() form); "" as recorded
};

// As recorded first, then one per requested architecture (parse_arch_request() form) whose options
// differ from every earlier variant's: `options` with their -arch rewritten (an NVRTC compile's, a
// link's or an NVVM compile's alike).
std::vector<ReplayVariant> replay_variants(const std::vector<std::string>& options,
                                           const std::vector<std::string>& archs);

// Why a program compiled by `library` with `options` must not be replayed, or "": an option holding a
// NUL byte, an option with a side effect (it reads or writes files beyond the compile's inputs: a
// recording's paths are never written) or one the option table (libraries/nvrtc/options.h) does not know
// for that NVRTC version (a genuine recording holds none: such compiles are not cached); and -Xnvvm, or
// -Xcudafe with anything but a diagnostic control, whose values NVRTC's internal tools take (some
// write files).
// `append_flags` is NVRTC_APPEND_FLAGS (nullptr when unset), which NVRTC appends to every compile.
std::string replay_option_refusal(const std::vector<std::string>& options, const keying::LibraryIdentity& library,
                                  const char* append_flags);

// Why a recorded link or NVVM compile must not be replayed, or "": an option or a name holding a NUL
// byte, an option the cache does not know (libraries/nvjitlink/options.h, libraries/nvvm/options.h: a genuine
// recording holds none), -Xnvvm, or -Xptxas with anything but -v or -O<n> (values handed to
// internal tools, which could write files).
std::string handle_replay_refusal(const core::HandleCallRecord& record);

// "link of 2 inputs ('input0', ...)", "NVVM compile of 2 modules ('module0', ...)".
std::string handle_call_label(const core::HandleCallRecord& record);

// What a worker reports for one variant: "stored", "cached" (already a hit), "failed", "skipped",
// "refused".
struct ReplayOutcome {
  std::size_t program = 0;  // index in the worker's task file
  std::size_t variant = 0;
  std::string status;
  std::string detail;
};
// Writes one outcome line per variant of the recorded call `index` to stdout: each refused
// (`why_refused`) or skipped (`why_skipped`) when either is set, else `replay(v)`'s outcome. The one
// loop every library's calls take in the worker (NVRTC's compiles, links, NVVM compiles).
void report_variants(std::size_t index, std::size_t variants, const std::string& why_refused,
                     const std::string& why_skipped, const std::function<ReplayOutcome(std::size_t variant)>& replay);
// One line of a worker's stdout, and back.
std::string format_outcome(const ReplayOutcome& outcome);
bool parse_outcome(std::string_view line, ReplayOutcome& outcome);

// The shim's debug log (NVRTC_CACHE_LOG_FILE), read from where the last read stopped.
class LogTail {
 public:
  explicit LogTail(std::string path) : path_(std::move(path)) {}
  std::string next();

 private:
  std::string path_;
  std::uint64_t offset_ = 0;
};

// A call's outcome from what the shim logged during it: "cached" (a hit), "stored", or "failed" with
// the shim's reason; `rc_text` (" (NVRTC returned 6)", or "") joins the detail.
ReplayOutcome outcome_from_log(const std::string& logged, const std::string& rc_text);

// The worker: compiles every program of `task_file` (a record file) for `archs`, through the NVRTC
// each names, then replays its links and NVVM compiles (replay_handle_calls), writing one outcome
// line per variant to stdout. `log_file` is the shim's debug log (NVRTC_CACHE_LOG_FILE), read after
// each compile to tell stored, cached and not stored apart. `outputs_dir` (may be ""): where each
// compile's outputs are left for the links (tools/replay/retarget.h).
int run_replay_worker(const std::string& task_file, const std::vector<std::string>& archs, const std::string& log_file,
                      const std::string& outputs_dir);

// Replays `calls` (task indices from `first_index` on) for `archs`: each NVVM compile's result, as
// recorded and per architecture, goes to `outputs` (when not null); each link's inputs are
// retargeted from `outputs`.
void replay_handle_calls(const std::vector<core::HandleCallRecord>& calls, std::size_t first_index,
                         const std::vector<std::string>& archs, LogTail& log, RetargetDirectory* outputs);

}  // namespace nvrtc_cache::tools
