// `nvrtc-cache doctor [--proxy] [--json] -- CMD [ARGS...]`: runs CMD under the cache as `nvrtc-cache run`
// does, with NVRTC_CACHE_REPORT_DIR set to a fresh directory where each of its processes' shim writes
// which real NVRTC, nvJitLink and libNVVM its compiles reached the hooks through (shim/call_report.h),
// then reports those libraries (path, version, build-id, compiles, processes) and whether any compile
// was reached (--json: the report alone on standard output, CMD's own output on standard error). Exit status: 0 when at
// least one was, 1 when none was, 2 for bad usage. Contract: single-threaded; forks and waits for CMD (SIGINT and
// SIGQUIT ignored meanwhile, as the terminal delivers them to CMD); removes its report directory; never throws but
// std::bad_alloc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvrtc_cache::tools {

struct ReportedLibrary {
  std::string library;  // "NVRTC", "nvJitLink", "libNVVM"
  std::string path;
  std::string version;   // "13.5"
  std::string build_id;  // hex, "" when the object has none
  std::uint64_t calls = 0;
  std::uint64_t processes = 0;
};

// The reports in `directory` (<pid>.report files), merged by library, path, version and build-id, in
// that order; malformed lines and files are left out.
std::vector<ReportedLibrary> read_call_reports(const std::string& directory);

int doctor_run(const std::vector<std::string>& command, bool proxy, bool json);

}  // namespace nvrtc_cache::tools
