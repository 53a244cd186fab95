// Dependencies: what a compile read from outside its C API inputs — files (with content
// fingerprints), paths it probed (found or not), environment variables, and the date when __DATE__
// was expanded — recorded from what NVRTC was observed doing, and validated against the filesystem
// and environment later (ccache's direct mode, plus failed probes).
// Contract: record_dependencies() and validate_dependencies() read the filesystem (stat, realpath,
// readlink, and reading recorded files to fingerprint them), the environment and the clock, all
// through a platform::Env (so faults can be injected there); they never write, never throw, and are
// thread-safe for distinct sets. A path NVRTC used relative to the working directory is recorded
// relative (fingerprinted as the compile's directory resolved it) and validated against the working
// directory of the lookup: a result is served from another directory only if what the path names
// there is the same.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "direct/program_name_scan.h"
#include "keying/working_directory_rule.h"
#include "platform/env.h"
#include "util/binary_io.h"

namespace nvrtc_cache::direct {

enum class ObservationKind : std::uint8_t { kOpen, kStat, kAccess, kRealpath, kOpendir, kReadlink, kGetenv };

// One libc call NVRTC made during a compile.
struct Observation {
  ObservationKind kind;
  bool succeeded;            // the path existed / the variable was set
  bool for_writing;          // kOpen: opened for writing
  std::string_view subject;  // path or variable name
  std::string_view value;    // kGetenv: value; kRealpath/kReadlink: the resolved path
};

struct FileStamp {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t mtime_ns = 0, ctime_ns = 0;
  std::uint32_t mode = 0;
  bool operator==(const FileStamp&) const = default;
};

struct PathDependency {
  std::string path;  // absolute, or relative to the working directory (validated against the current one)
  bool must_be_absent = false;
  bool must_exist = false;
  bool content = false;                        // must_exist, and its bytes must fingerprint the same
  bool racy = false;                           // modified within a second of recording: always rehash
  FileStamp stamp;                             // when must_exist: at recording (type and, for content, quick check)
  std::array<std::uint8_t, 16> fingerprint{};  // XXH3-128 of the content
  std::optional<std::string> realpath_target;  // realpath() must still give this
  std::optional<std::string> readlink_target;  // readlink() must still give this
};

struct EnvDependency {
  std::string name;
  bool present = false;
  std::string value;
};

struct DependencySet {
  std::vector<PathDependency> paths;  // sorted by path
  std::vector<EnvDependency> env;     // sorted by name
  std::string date;                   // __DATE__'s expansion if a compiled text uses it, else ""

  bool empty() const { return paths.empty() && env.empty() && date.empty(); }
  // Everything that identifies the inputs (not the stamps): feeds the result key.
  void encode_identity(util::ByteWriter& w) const;
  void encode(util::ByteWriter& w) const;
  // Untrusted input: false unless it is exactly what encode() writes for a set that
  // record_dependencies() can produce (sorted paths; content only of regular files...).
  bool decode(util::ByteReader& r);
};

// Which of __TIME__, __TIMESTAMP__, __DATE__ a text mentions (conservatively: anywhere).
struct TimeMacros {
  bool time = false;  // __TIME__ or __TIMESTAMP__: the result is never stored
  bool date = false;  // __DATE__: the date joins the dependencies
};
TimeMacros scan_time_macros(std::string_view text);
// Today's date as __DATE__ expands ("Nov 21 2026", local time).
std::string date_macro_today();

// True if a set variable of this name can change NVRTC's output (all but PWD — measured to change
// nothing; it is keyed with the working directory where that matters — and the driver's cache
// location and size, which decide only where NVRTC's own cache lives). CUDA_CACHE_DISABLE counts:
// it decides whether NVRTC's own cache can hit, and a hit's log lacks ptxas's -v lines.
bool environment_variable_affects_output(std::string_view name);

// Why a compile's dependencies cannot be recorded, decided where it is found (the statistics'
// uncacheable reasons).
enum class NotRecorded : std::uint8_t {
  kTimeMacro,      // __TIME__ or __TIMESTAMP__ is used
  kFileModified,   // a file it read changed, appeared or vanished during or right after the compile
  kWroteOrListed,  // NVRTC wrote (or tried to write) a file, or listed a directory
  kUnwatchable,    // NVRTC did something its reads cannot be followed through
  kUnobservable,   // NVRTC's file accesses cannot be observed in this process at all
  kNvrtcError,     // NVRTC returned an error that is not cached
  kOther,
};

struct RecordedDependencies {
  std::optional<DependencySet> set;  // nullopt: the compile must not be stored
  std::string why_not;               // for the log
  NotRecorded reason = NotRecorded::kOther;
  bool reveals_program_name = false;  // set by the caller from a ProgramNameScan
};

// Builds the dependency set of a compile from NVRTC's observations. `compile_start_realtime_ns` is
// CLOCK_REALTIME when the compile began (a file modified after it makes the compile unstorable).
// `texts_use` covers the texts the shim already holds (source, in-memory headers).
// `variables_read_before` are variables NVRTC read in earlier compiles of this process: NVRTC reads
// some only once per process, so their current values join every set.
// `working_directory` is the compile's (what relative paths were resolved against). With
// kThroughFoundRelativePaths, a compile that read a file through a relative path is pinned to it:
// the set then requires "." to resolve to the same directory. `name_scan` (may be null) is given
// the text of every file the compile read.
RecordedDependencies record_dependencies(
    std::span<const Observation> observations, const std::string& working_directory,
    std::int64_t compile_start_realtime_ns, TimeMacros texts_use,
    std::span<const std::string> variables_read_before = {},
    keying::WorkingDirectoryUse working_directory_use = keying::WorkingDirectoryUse::kAlways,
    platform::Env& env = *platform::Env::system(), ProgramNameScan* name_scan = nullptr);

// Which kind of dependency no longer holds.
enum class Mismatch : std::uint8_t { kNone, kPath, kEnvironment, kDate };

struct Validation {
  bool matches = false;
  Mismatch kind = Mismatch::kNone;
  std::string mismatch;    // why not, for the debug log ("/a/b.h changed", "NVRTC_APPEND_FLAGS changed")
  bool refreshed = false;  // stamps were updated after a content match (worth rewriting the manifest)
};
Validation validate_dependencies(DependencySet& set, platform::Env& env = *platform::Env::system());

}  // namespace nvrtc_cache::direct
