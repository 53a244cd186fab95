// CompileWatch (Windows): what the real NVRTC read during one compile, from the import watch
// (shim/windows/import_table_patch.h) installed on the real DLL and its builtins DLLs, as direct
// mode's observations (direct/dependencies.h). Mapping of ImportEventKind:
//   kOpen, kStat, kGetenv   -> the same observation (a failed call is a probe of absence)
//   kResolve                -> GetFullPathNameW / GetVolumePathNameW: nothing (a computation on the
//                              name and the working directory, which the key's working-directory
//                              rule covers); SearchPathW: the found path stat'ed, or taint
//   kList                   -> a failed search is a probe of absence; a listing taints
//   kEnvironmentBlock       -> noted: the caller vouches for it (environment_block_read())
//   kTempPath               -> nothing (writes there are seen as opens for writing)
//   kExpandEnvironment, kChangedDirectory, kStartedProgram, a path too long -> taint
// Events on a thread with no watch of its own while any watch is active taint every active watch.
// Contract: a CompileWatch is created and stopped on the compiling thread; the observer runs on
// any thread and never throws (an allocation failure taints).
#pragma once

#include <windows.h>

#include <cstdint>
#include <string>
#include <vector>

#include "direct/dependencies.h"

namespace nvrtc_cache::shim::windows {

// Patches the real DLL's and its loaded builtins DLLs' import tables (once per module) and installs
// the observer. True when the real DLL's table was parsed and every watched import it has is hooked.
bool install_compile_watch(HMODULE real_nvrtc);

class CompileWatch {
 public:
  CompileWatch();
  ~CompileWatch();
  CompileWatch(const CompileWatch&) = delete;
  CompileWatch& operator=(const CompileWatch&) = delete;

  void stop();
  // The observations, viewing strings this watch owns (valid while it lives).
  std::vector<direct::Observation> observations() const;
  std::size_t event_count() const { return events_.size(); }
  bool tainted() const { return !why_tainted_.empty(); }
  const std::string& why_tainted() const { return why_tainted_; }
  direct::NotRecorded taint_reason() const { return taint_reason_; }
  bool environment_block_read() const { return environment_block_read_; }

  // For the observer.
  void add(direct::ObservationKind kind, bool succeeded, bool for_writing, const char* subject, const char* value);
  void taint(std::string why, direct::NotRecorded reason = direct::NotRecorded::kUnwatchable);
  void note_environment_block() { environment_block_read_ = true; }

 private:
  struct Event {
    direct::ObservationKind kind;
    bool succeeded;
    bool for_writing;
    std::string subject;
    std::string value;
  };
  std::vector<Event> events_;
  std::string why_tainted_;
  direct::NotRecorded taint_reason_ = direct::NotRecorded::kUnwatchable;
  bool environment_block_read_ = false;
  bool active_ = true;
  std::uint64_t foreign_at_start_ = 0;
};

}  // namespace nvrtc_cache::shim::windows
