// run [--] CMD [ARGS...] on Windows (tools/windows/run_command.cc): CMD started with the proxy injected
// before its code runs (shim/windows/process_injection.h), whichever way it loads NVRTC.
// Contract: reads its arguments from the process's wide command line (GetCommandLineW), not argv;
// returns CMD's exit code (or run's own failure status); messages on stderr, never stdout.
#pragma once

namespace nvrtc_cache::tools::windows {

int run_command();

}  // namespace nvrtc_cache::tools::windows
