// How much a piece of a test raises the process's resident memory at its peak: VmHWM (the peak)
// is reset to VmRSS through /proc/self/clear_refs ("5", Linux 4.0+), the piece runs, and the new
// VmHWM is compared with the VmRSS before it. Other threads of the process count too (a test's
// server thread: keep what it holds small).
// Contract: test-only, header-only, Linux; nullopt where the peak cannot be reset or read.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace nvrtc_cache::testing {

// A "VmRSS:" / "VmHWM:" line of /proc/self/status, in bytes; nullopt when absent.
inline std::optional<std::uint64_t> process_status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stoull(line.substr(field.size())) * 1024;  // "NNN kB"
  }
  return std::nullopt;
}

template <typename Run>
std::optional<std::uint64_t> peak_rss_growth_during(Run&& run) {
  {
    std::ofstream reset("/proc/self/clear_refs");
    reset << "5";
    reset.flush();
    if (!reset) return std::nullopt;
  }
  const std::optional<std::uint64_t> before = process_status_bytes("VmRSS:");
  run();
  const std::optional<std::uint64_t> peak = process_status_bytes("VmHWM:");
  if (!before || !peak) return std::nullopt;
  return *peak > *before ? *peak - *before : 0;
}

}  // namespace nvrtc_cache::testing
