#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <set>
#include <string>

#include "platform/errno_guard.h"
#include "platform/fork_locks.h"
#include "platform/own_file.h"

namespace nvrtc_cache::core {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
std::atomic<int> g_fd{STDERR_FILENO};

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kOff:
      break;
  }
  return "";
}

// platform::ForkRank::kLogTopics. topics() is only reached under it, so no child inherits its
// creation in progress. Constant-initialized where std::mutex's constructor is constexpr (glibc:
// no constructor runs, so a lock taken from another library's constructor is already usable);
// winpthreads' mutex has no constant initializer, and Windows has no fork.
std::mutex g_topics_mu;
std::set<std::string, std::less<>>& topics() {
  static auto* seen = new std::set<std::string, std::less<>>();
  return *seen;
}

__attribute__((constructor)) void register_fork_locks() {
  platform::join_fork_order(platform::ForkRank::kLogTopics, {[] { g_topics_mu.lock(); }, [] { g_topics_mu.unlock(); },
                                                             [] { platform::renew_in_child(g_topics_mu); }});
}

}  // namespace

void log_configure(LogLevel level, std::string_view file) {
  const platform::ErrnoGuard errno_guard;
  g_level.store(static_cast<int>(level));
  if (!file.empty()) {
    const std::string path(file);
    // A regular file of the user's own (or created 0600): never a link, a FIFO, or another user's file.
    std::string why;
    const int fd = platform::open_own_file_for_append(path, &why);
    if (fd >= 0) {
      g_fd.store(fd);
    } else if (!why.empty()) {  // (Windows says nothing: platform/own_file.h)
      log_once(LogLevel::kWarn, "log-file", "log_file " + path + " " + why + "; logging to stderr");
    }
  }
}

bool log_enabled(LogLevel level) {
  return level != LogLevel::kOff && static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void log_line(LogLevel level, std::string_view message) {
  if (!log_enabled(level)) return;
  const platform::ErrnoGuard errno_guard;
  try {
    std::string line = "nvrtc-cache[" + std::to_string(getpid()) + "] " + level_name(level) + ": ";
    line.append(message);
    line.push_back('\n');
    // (The count as the Windows CRT's write takes it: an unsigned int; a line is far shorter.)
    const auto ignored = ::write(g_fd.load(), line.data(), static_cast<unsigned>(line.size()));
    (void)ignored;
  } catch (...) {
  }
}

void log_once(LogLevel level, std::string_view topic, std::string_view message) {
  if (!log_enabled(level)) return;
  try {
    std::lock_guard lock(g_topics_mu);
    if (!topics().emplace(topic).second) return;
  } catch (...) {
    return;
  }
  log_line(level, message);
}

}  // namespace nvrtc_cache::core
