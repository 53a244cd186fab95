// What the Wine suites (tests/integration/wine_*_test.cc) say to Windows programs: a Unix path as
// Wine's Z: drive (the Unix root) names it, and a variable of the test's environment or "".
// Header-only; pure.
#pragma once

#include <cstdlib>
#include <string>

namespace nvrtc_cache::testing {

inline std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

inline std::string windows_path(const std::string& unix_path) {
  std::string out = "Z:" + unix_path;
  for (char& c : out) c = c == '/' ? '\\' : c;
  return out;
}

}  // namespace nvrtc_cache::testing
