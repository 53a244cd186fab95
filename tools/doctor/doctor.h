// Doctor's report: one line per check, in plain words, and whether anything blocks caching; and the
// checks both systems' doctors make (tools/doctor/checks.cc): the configuration, the opened cache and
// its store, the sample compile's verdict from its three runs, and the shared tiers
// (tools/doctor/tiers.cc). Each system's doctor (doctor_command.cc, windows/doctor_command.cc) adds
// its own: the shim or the proxy, where NVRTC is, the directory's owner and filesystem.
// Contract: single-threaded; printing happens as checks are added (stdout).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "platform/env.h"

#include "core/config.h"
#include "store/cache_directory.h"

namespace nvrtc_cache::tools {

enum class Severity { kOk, kNote, kWarn, kFail };

class DoctorReport {
 public:
  // `topic` is a short name ("shim", "cache directory"); `text` says what was found and, when not
  // ok, what to do.
  void add(Severity severity, const std::string& topic, const std::string& text);
  int failures() const { return failures_; }
  int warnings() const { return warnings_; }

 private:
  int failures_ = 0;
  int warnings_ = 0;
};

// The version line and the configuration: bad values, misspelt variables, caching disabled.
void check_configuration(DoctorReport& report, const core::Config& config);

// The space of the filesystem that holds the cache directory, where the system tells it.
struct SpaceOnDisk {
  std::uint64_t free_bytes = 0;   // available to this user
  std::uint64_t total_bytes = 0;  // the filesystem's size (0: not known)
};
using platform::kFullDiskBytes;

// The cache `opened` (store::open_cache of the configuration): usable, writable, the room left
// (`space`: the disk's where known, a failure when it is full; `data_file_bytes`: data.mdb's size),
// and its store read to the end. `described` names the directory with what the system tells of it.
void check_opened_cache(DoctorReport& report, const core::Config& config, const store::OpenedCache& opened,
                        const std::string& described, std::optional<SpaceOnDisk> space, std::uint64_t data_file_bytes);

// The sample compile (`__sample-compile`): run directly, then twice through the cache in a scratch
// cache directory; the verdict from the three runs and that cache's counters, in the system's words.
struct SampleRun {
  int exit_code = -1;
  std::string out;
  std::string first_error_line;  // the direct run's stderr, first line
};
struct SampleCompileRuns {
  SampleRun direct, cold, warm;
  std::string library;  // the NVRTC the direct run loaded
};
struct SampleCompileWords {
  std::string interceptor;  // "the shim", "the proxy"
  std::string run_command;  // "nvrtc-cache run", "nvrtc-cache.exe run"
  std::string nvrtc_fix;    // how to give the direct run a working NVRTC
};
void report_sample_compile(DoctorReport& report, const SampleCompileRuns& runs, const std::string& scratch_cache,
                           const SampleCompileWords& words);

// The closing verdict line; the exit status (1 when something blocks caching).
int doctor_verdict(const DoctorReport& report);

std::string mib_text(std::uint64_t bytes);

// Shared tiers: whether each configured tier (config.remote) is reachable and its secret usable.
// The hook the shared-tier code fills in (tools/doctor/tiers.cc).
void check_tiers(const core::Config& config, DoctorReport& report);

}  // namespace nvrtc_cache::tools
