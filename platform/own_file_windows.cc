// Opening the user's own files (platform/own_file.h) on Windows: the log file is opened with the CRT
// (binary, not inherited by child processes; no owner to check: the cache and its files live under
// the user's profile, whose ACL gives them to that user), and a configuration file is read through
// the Env. Neither says why a file could not be used.
#include "platform/own_file.h"

#include <fcntl.h>
#include <io.h>

#include "platform/env.h"
#include "platform/errno_guard.h"

namespace nvrtc_cache::platform {

int open_own_file_for_append(const std::string& path, std::string* why) {
  const ErrnoGuard errno_guard;
  if (why) why->clear();
  return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_BINARY | O_NOINHERIT, 0600);
}

std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes, std::string* why,
                                             unsigned*) {
  if (why) why->clear();
  std::string text;
  if (Env::system()->read_file(path, max_bytes, &text) != 0) return std::nullopt;
  return text;
}

}  // namespace nvrtc_cache::platform
