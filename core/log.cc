#include "core/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <set>
#include <string>

#include "store/fork_locks.h"
#include "util/errno_guard.h"
#ifndef _WIN32
#include "util/own_file.h"
#endif

namespace nvrtc_cache::core {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
std::atomic<int> g_fd{STDERR_FILENO};

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kOff: break;
  }
  return "";
}

// store::ForkRank::kLogTopics. topics() is only reached under it, so no child inherits its
// creation in progress.
#ifdef _WIN32
std::mutex g_topics_mu;  // winpthreads' mutex has no constant initializer (and Windows has no fork)
#else
constinit std::mutex g_topics_mu;
#endif
std::set<std::string, std::less<>>& topics() {
  static auto* seen = new std::set<std::string, std::less<>>();
  return *seen;
}

__attribute__((constructor)) void register_fork_locks() {
  store::join_fork_order(store::ForkRank::kLogTopics, {[] { g_topics_mu.lock(); }, [] { g_topics_mu.unlock(); },
                                                       [] { store::renew_in_child(g_topics_mu); }});
}

}  // namespace

void log_configure(LogLevel level, std::string_view file) {
  const util::ErrnoGuard errno_guard;
  g_level.store(static_cast<int>(level));
  if (!file.empty()) {
    const std::string path(file);
#ifdef _WIN32
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_BINARY | O_NOINHERIT, 0600);
    if (fd >= 0) g_fd.store(fd);
#else
    // A regular file of the user's own (or created 0600): never a link, a FIFO, or another user's file.
    std::string why;
    const int fd = util::open_own_file_for_append(path, &why);
    if (fd >= 0) {
      g_fd.store(fd);
    } else {
      log_once(LogLevel::kWarn, "log-file", "log_file " + path + " " + why + "; logging to stderr");
    }
#endif
  }
}

bool log_enabled(LogLevel level) {
  return level != LogLevel::kOff && static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void log_line(LogLevel level, std::string_view message) {
  if (!log_enabled(level)) return;
  const util::ErrnoGuard errno_guard;
  try {
    std::string line = "nvrtc-cache[" + std::to_string(getpid()) + "] " + level_name(level) + ": ";
    line.append(message);
    line.push_back('\n');
#ifdef _WIN32
    const int ignored = ::write(g_fd.load(), line.data(), static_cast<unsigned>(line.size()));  // CRT _write
#else
    const ssize_t ignored = ::write(g_fd.load(), line.data(), line.size());
#endif
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
