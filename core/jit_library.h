// The JIT libraries the cache serves, as one enumeration: what names a library in counters
// (core/stats.h: every library has the same rows), in log lines and in handle entries
// (core/handle_entry.h stores nvJitLink's and libNVVM's tags, 1 and 2; NVRTC's compile entries have
// their own format). Contract: constants only; thread-safe.
#pragma once

#include <cstdint>

namespace nvrtc_cache::core {

enum class JitLibrary : std::uint8_t { nvrtc = 0, nvjitlink = 1, nvvm = 2 };

inline constexpr JitLibrary kJitLibraries[] = {JitLibrary::nvrtc, JitLibrary::nvjitlink, JitLibrary::nvvm};

// "NVRTC", "nvJitLink", "libNVVM".
constexpr const char* library_name(JitLibrary library) {
  switch (library) {
    case JitLibrary::nvrtc:
      return "NVRTC";
    case JitLibrary::nvjitlink:
      return "nvJitLink";
    case JitLibrary::nvvm:
      return "libNVVM";
  }
  return "?";
}

// What one call of the library is, for people: "compile", "link", "NVVM compile".
constexpr const char* call_name(JitLibrary library) {
  return library == JitLibrary::nvjitlink ? "link" : library == JitLibrary::nvvm ? "NVVM compile" : "compile";
}

}  // namespace nvrtc_cache::core
