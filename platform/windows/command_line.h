// What a program starting a child needs on Windows: the command line from its arguments, quoted so
// that CommandLineToArgvW and the C runtimes read each one back unchanged (CreateProcessW takes one
// string), and a standard handle made inheritable. Windows only.
// Contract: thread-safe; append_quoted_argument is pure and may throw std::bad_alloc only;
// make_standard_handle_inheritable changes the handle's flag, nothing else.
#pragma once

#include <windows.h>

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

// Lets children started with bInheritHandles inherit the standard handle `which` (STD_INPUT_HANDLE, ...).
inline void make_standard_handle_inheritable(DWORD which) {
  const HANDLE h = GetStdHandle(which);
  if (h != nullptr && h != INVALID_HANDLE_VALUE) SetHandleInformation(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
}

}  // namespace nvrtc_cache::platform::windows
