// The terminal of a stream (platform/terminal.h) on POSIX: isatty and TIOCGWINSZ.
#include "platform/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

namespace nvrtc_cache::platform {

bool is_terminal(std::FILE* stream) { return ::isatty(::fileno(stream)) == 1; }

std::size_t terminal_columns(std::FILE* stream) {
  struct winsize size {};
  if (!is_terminal(stream) || ::ioctl(::fileno(stream), TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

void use_binary_mode(std::FILE*) {}

}  // namespace nvrtc_cache::platform
