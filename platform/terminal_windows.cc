// The terminal of a stream (platform/terminal.h) on Windows: a console is a handle the console API
// answers for (a pipe or a file is not, whatever _isatty says of the NUL device), its width the
// screen buffer's window; binary mode is the CRT's _setmode.
#include "platform/terminal.h"

#include <fcntl.h>
#include <io.h>
#include <windows.h>

namespace nvrtc_cache::platform {
namespace {

HANDLE handle_of(std::FILE* stream) {
  const int fd = ::_fileno(stream);
  return fd < 0 ? INVALID_HANDLE_VALUE : reinterpret_cast<HANDLE>(::_get_osfhandle(fd));
}

}  // namespace

bool is_terminal(std::FILE* stream) {
  DWORD mode = 0;
  const HANDLE handle = handle_of(stream);
  return handle != INVALID_HANDLE_VALUE && GetConsoleMode(handle, &mode) != 0;
}

std::size_t terminal_columns(std::FILE* stream) {
  CONSOLE_SCREEN_BUFFER_INFO info{};
  const HANDLE handle = handle_of(stream);
  if (handle == INVALID_HANDLE_VALUE || !GetConsoleScreenBufferInfo(handle, &info)) return 0;
  const int columns = info.srWindow.Right - info.srWindow.Left + 1;
  return columns > 0 ? static_cast<std::size_t>(columns) : 0;
}

void use_binary_mode(std::FILE* stream) { (void)::_setmode(::_fileno(stream), _O_BINARY); }

}  // namespace nvrtc_cache::platform
