// The terminal a standard stream is on: whether it is one, how wide it is, and a stream's binary
// mode (the CLI's progress bars, `ls`'s fitted columns, `extract -o -` writing bytes to stdout).
// Contract: thread-safe as the C library's streams are; fork-safe; no filesystem access; never
// throws. Implementations, chosen by the build: terminal_posix.cc (isatty, TIOCGWINSZ; every
// stream is binary) and terminal_windows.cc (the console's handle and screen buffer; _setmode).
#pragma once

#include <cstddef>
#include <cstdio>

namespace nvrtc_cache::platform {

// Whether `stream` (stdout or stderr) is a terminal (Windows: a console).
bool is_terminal(std::FILE* stream);

// The width in columns of the terminal `stream` is on, or 0 when it is on none or that is unknown.
std::size_t terminal_columns(std::FILE* stream);

// Makes `stream` write its bytes as they are (Windows: no "\n" to "\r\n"); nothing elsewhere.
void use_binary_mode(std::FILE* stream);

}  // namespace nvrtc_cache::platform
