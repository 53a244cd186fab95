// A Windows command line from its arguments, quoted so that CommandLineToArgvW and the C runtimes
// read each one back unchanged (the program starting a child builds it: CreateProcessW takes one
// string). Windows only.
// Contract: pure; thread-safe; may throw std::bad_alloc only.
#pragma once

#include <string>

namespace nvrtc_cache::platform::windows {

// Appends `argument` to `line`, after a space unless `line` is empty.
inline void append_quoted_argument(std::wstring& line, const std::wstring& argument) {
  if (!line.empty()) line.push_back(L' ');
  if (!argument.empty() && argument.find_first_of(L" \t\n\v\"") == std::wstring::npos) {
    line += argument;
    return;
  }
  line.push_back(L'"');
  std::size_t backslashes = 0;
  for (const wchar_t c : argument) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    line.append(c == L'"' ? backslashes * 2 + 1 : backslashes, L'\\');
    backslashes = 0;
    line.push_back(c);
  }
  line.append(backslashes * 2, L'\\');
  line.push_back(L'"');
}

}  // namespace nvrtc_cache::platform::windows
