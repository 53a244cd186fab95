// NVRTC's create and compile hooks (libraries/nvrtc/hooks.h), the same on every OS: a created
// program is recorded for keying, a compile goes through the compile lifecycle over this process's
// host (shim/lifecycle/jit_host.h). The caller's error state (platform/error_state.h) is the
// library's after a real compile, its own after a served one.
#include <memory>

#include "libraries/nvrtc/compile_steps.h"
#include "libraries/nvrtc/hooks.h"
#include "libraries/nvrtc/program_table.h"
#include "platform/error_state.h"
#include "shim/lifecycle/compile_lifecycle.h"
#include "shim/lifecycle/jit_host.h"

namespace nvrtc_cache::shim::hooks {

nvrtcResult nvrtcCreateProgram(const interpose::RealNvrtc& real, nvrtcProgram* prog, const char* src, const char* name,
                               int num_headers, const char* const* headers, const char* const* include_names) {
  const nvrtcResult rc = real.nvrtcCreateProgram(prog, src, name, num_headers, headers, include_names);
  return record_created_program<platform::ErrorStateKept>(
      rc, prog, jit_host().enabled(), [&] { return real.identity; }, src, name, num_headers, headers, include_names);
}

nvrtcResult nvrtcCompileProgram(const interpose::RealNvrtc& real, nvrtcProgram prog, int num_options,
                                const char* const* options) {
  JitHost& host = jit_host();
  host.note_call(core::JitLibrary::nvrtc, real.link_map, reinterpret_cast<const void*>(real.nvrtcVersion),
                 real.identity);
  std::shared_ptr<ProgramRecord> record = host.enabled() ? program_table().find(prog) : nullptr;
  if (!record) return real.nvrtcCompileProgram(prog, num_options, options);
  platform::ErrorStateKept kept;
  int error_after = platform::error_state();
  const nvrtcResult rc = compile_program(host, real, *record, prog, num_options, options, &error_after);
  kept.set(error_after);
  return rc;
}

}  // namespace nvrtc_cache::shim::hooks
