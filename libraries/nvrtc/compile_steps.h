// The steps of NVRTC's compile lifecycle (shim/lifecycle/compile_lifecycle.h), the same on every OS:
// whether a compile may be cached, the direct-mode lookup (manifest -> validated dependencies ->
// entry), reading a compile's outputs back as an entry and storing it with its manifest, what a
// compile depended on, and recording a created program (a template over each platform's guard of
// the caller's error state: errno on Linux, the thread's last-error value on Windows). The hooks
// nvrtcDestroyProgram, nvrtcAddNameExpression and nvrtcSetFlowCallback (libraries/nvrtc/hooks.h) are
// defined once, in compile_steps.cc, for both.
// Contract: no OS calls of their own beyond the store and NVRTC; counters go to the StatsDeltas
// given; no logging (the callers log), but note_store_damage; may throw std::bad_alloc (the callers
// fail open), except the recording hooks, which never throw: a program that cannot be recorded
// passes through.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/compile_entry.h"
#include "core/stats.h"
#include "direct/dependencies.h"
#include "direct/manifest.h"
#include "keying/cache_key.h"
#include "libraries/nvrtc/real_nvrtc.h"
#include "shim/lifecycle/jit_host.h"
#include "shim/lifecycle/manifest_lookup.h"
#include "libraries/nvrtc/program_table.h"
#include "store/store.h"

namespace nvrtc_cache::shim {

// Why a compile of `record` by `real` with these options (then `append_flags`, NVRTC_APPEND_FLAGS'
// value, which NVRTC appends) must not be cached; nullopt when it may be: the NVRTC is 12.0 or newer
// (11.x passes through untouched, its own reason), its inputs were captured,
// it has no flow callback, every option is known for that NVRTC (libraries/nvrtc/options.h) and none
// has a side effect, and the library exports no function the shim does not know.
std::optional<NotCacheable> reason_not_cacheable(const interpose::RealNvrtc& real, const ProgramRecord& record,
                                                 int num_options, const char* const* options,
                                                 const std::optional<std::string_view>& append_flags);
// A program whose last compile was served from the cache has never been compiled by NVRTC; before a
// compile that goes to NVRTC uncached, that compile is run for real (with its recorded options), so
// that NVRTC holds the state it would hold without the cache (some outputs survive a later failed
// compile). The program is no longer served afterwards. The caller keeps its error state.
void materialize_served(const interpose::RealNvrtc& real, ProgramRecord& record, nvrtcProgram prog);
// The statistics' reason for a compile whose dependencies could not be recorded.
core::Counter uncacheable_counter(direct::NotRecorded reason);
// The return codes whose compile is a result worth keeping (success, a compile error, a bad option).
bool result_is_cacheable(nvrtcResult rc);
// Whether the source or a header uses __TIME__ / __DATE__.
direct::TimeMacros time_macros_in(const keying::ProgramInputs& inputs);

// What a compile of `record` depended on, from what the host's watch saw (`observations`: the host
// decides first whether its watch may be trusted): NVRTC's bundled-headers bookkeeping left out, the
// program's directory scanned where its key leaves it out, and the variables `always_recorded`
// recorded whether or not NVRTC read them. `append_flags` is NVRTC_APPEND_FLAGS as the process has
// it. Every OS's host calls it, so what NVRTC depends on is decided once.
direct::RecordedDependencies nvrtc_dependencies(std::vector<direct::Observation> observations,
                                                const ProgramRecord& record, std::int64_t start_realtime_ns,
                                                const std::vector<std::string>& always_recorded,
                                                const std::optional<std::string>& append_flags);
// A scan (direct/program_name_scan.h) of the texts the shim holds: the source, the in-memory headers
// and the macros the options define. record_dependencies() adds the files NVRTC read.
direct::ProgramNameScan program_name_scan_of(const keying::ProgramInputs& inputs);
// Whether a result compiled from `inputs` (whose key leaves the program's directory out) depends on
// that directory: its texts reveal the name (`texts_reveal_it`), a path it depended on lies in the
// directory (a quoted include searched there), or an output names it (a diagnostic in the log).
bool result_depends_on_program_directory(const keying::ProgramInputs& inputs, const direct::DependencySet& dependencies,
                                         const core::CompileEntry& entry, bool texts_reveal_it);

using Lookup = LookupOf<core::CompileEntry>;

// The direct key names a manifest; the first result whose dependencies still hold and that holds
// every output `real` has (covers_outputs_of) is the answer. A manifest or entry that fails to
// decode is counted as corrupt and erased (`on_corrupt_entry`, if given, is called for an entry).
Lookup look_up(store::Store& store, const keying::CacheKey& direct_key, const interpose::RealNvrtc& real,
               core::StatsDeltas& stats, void (*on_corrupt_entry)() = nullptr);

// The compile's outputs read back from NVRTC, described, or nullopt (counted as uncacheable output)
// if any cannot be read back exactly (e.g. a return code newer than this build knows).
std::optional<core::CompileEntry> entry_to_store(const interpose::RealNvrtc& real, nvrtcProgram prog,
                                                 const ProgramRecord& record, nvrtcResult compile_rc,
                                                 std::int64_t compile_nanos, core::StatsDeltas& stats);

// Adds `result` to the direct key's manifest (erasing the results it displaces) and writes it back;
// `results` (optional) gets how many results the manifest then holds. `store_key_of`: the store key
// of a result (a compile's by default; a link's for libraries/nvjitlink/).
store::Status add_to_manifest(store::Store& store, const keying::CacheKey& direct_key, const keying::CacheKey& result,
                              direct::DependencySet dependencies, std::size_t* results = nullptr,
                              std::string (*store_key_of)(const keying::CacheKey&) = &direct::result_store_key);

// After a miss with a dependency set: reads the outputs back and stores them (compressed at zstd
// `compression_level`, 0 for none: core/entry_compression.h) under their result key and in the manifest, counting the
// miss (`miss_reason`), its compile time and the outcome (stores or errors). nullopt when the outputs could not be read
// back (counted by entry_to_store).
// `named_key` (may be null): the key with the program's directory, for a key that leaves it out; the
// result goes there instead when it depends on the directory (result_depends_on_program_directory,
// with `texts_reveal_name`); `*stored_under` (optional) gets the key of the manifest written. A stored
// result whose outputs embed the working directory leaves its markers (working_directory_markers.h).
std::optional<store::Status> store_result(store::Store& store, const interpose::RealNvrtc& real, nvrtcProgram prog,
                                          const ProgramRecord& record, const keying::CacheKey& direct_key,
                                          direct::DependencySet dependencies, nvrtcResult compile_rc,
                                          std::int64_t compile_nanos, core::Counter miss_reason, int compression_level,
                                          core::StatsDeltas& stats, std::size_t* results_in_manifest = nullptr,
                                          const keying::CacheKey* named_key = nullptr, bool texts_reveal_name = false,
                                          keying::CacheKey* stored_under = nullptr);

// What the store found damaged by itself since the last call, for the statistics flush of both
// platforms: entries it dropped on a failed envelope checksum are added to `stats` as corrupt
// (`reported` remembers how many were counted) and said once; a damaged store moved aside is said
// once. (The one step here that logs.)
void note_store_damage(const store::Store& store, core::StatsDeltas& stats, std::atomic<std::uint64_t>& reported);

// ---- Recording. `Guard` keeps the caller's error state across the recording. ----

// Records a program NVRTC has just created (`rc`): its inputs, for keying. Returns `rc`.
template <typename Guard, typename Identity>
nvrtcResult record_created_program(nvrtcResult rc, nvrtcProgram* prog, bool enabled, const Identity& library,
                                   const char* src, const char* name, int num_headers, const char* const* headers,
                                   const char* const* include_names) {
  if (rc != NVRTC_SUCCESS || prog == nullptr || *prog == nullptr || !enabled) return rc;
  Guard guard;
  try {
    auto record = std::make_shared<ProgramRecord>();
    record->inputs.library = library();
    if (name) record->inputs.name = name;
    record->inputs.source = src;
    if (num_headers > 0 && (headers == nullptr || include_names == nullptr)) {
      record->capturable = false;
    } else {
      for (int i = 0; i < num_headers; ++i) {
        if (headers[i] == nullptr || include_names[i] == nullptr) {
          record->capturable = false;
          break;
        }
        record->inputs.headers.push_back({include_names[i], headers[i]});
      }
    }
    program_table().insert(*prog, std::move(record));
  } catch (...) {
    program_table().erase(*prog);  // an unrecorded program simply passes through
  }
  return rc;
}

}  // namespace nvrtc_cache::shim
