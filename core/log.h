// Log: the shim's (and the Windows proxy's) diagnostics, to stderr or NVRTC_CACHE_LOG_FILE, never
// to stdout.
// Contract: thread-safe; each line is one write(2) (lines from threads and processes do not
// interleave); errno is preserved; log_once() prints a given topic at most once per process;
// nothing here throws or aborts. Fork: log_once()'s lock is platform::ForkRank::kLogTopics.
#pragma once

#include <string_view>

#include "core/config.h"

namespace nvrtc_cache::core {

void log_configure(LogLevel level, std::string_view file);
bool log_enabled(LogLevel level);
void log_line(LogLevel level, std::string_view message);
// Logs `message` only the first time `topic` is seen in this process.
void log_once(LogLevel level, std::string_view topic, std::string_view message);

// Logs `make_message()` at debug level, building the message only when debug logging is on.
template <typename MakeMessage>
void log_debug(MakeMessage&& make_message) {
  if (log_enabled(LogLevel::kDebug)) log_line(LogLevel::kDebug, make_message());
}
// The same at info: one line per call that is not served (what it was and why).
template <typename MakeMessage>
void log_info(MakeMessage&& make_message) {
  if (log_enabled(LogLevel::kInfo)) log_line(LogLevel::kInfo, make_message());
}

}  // namespace nvrtc_cache::core
