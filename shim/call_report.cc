#include "shim/call_report.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "platform/errno_guard.h"
#include "shim/interpose/loaded_object.h"

namespace nvrtc_cache::shim {
namespace {

struct ReportedLibrary {
  std::atomic<const void*> map{nullptr};  // claimed by the first caller
  std::atomic<bool> ready{false};         // the fields below are written
  std::atomic<std::uint64_t> calls{0};
  char line[768] = {};  // "library\tpath\tmajor.minor\tbuild-id" (no newline)
};

constinit ReportedLibrary g_libraries[kMaxReportedLibraries];
constinit std::atomic<int> g_state{0};  // 0 not read yet, 1 off, 2 on
constinit std::atomic<bool> g_atfork{false};
constinit char g_dir[512] = {};

void zero_counts_in_child() {
  for (ReportedLibrary& l : g_libraries) l.calls.store(0, std::memory_order_relaxed);
}

bool enabled() {
  int state = g_state.load(std::memory_order_acquire);
  if (state == 0) {
    const char* dir = std::getenv(kReportDirVariable);
    const bool on = dir != nullptr && dir[0] != '\0' && std::strlen(dir) < sizeof g_dir - 32;
    if (on) std::snprintf(g_dir, sizeof g_dir, "%s", dir);
    state = on ? 2 : 1;
    g_state.store(state, std::memory_order_release);
  }
  return state == 2;
}

std::string hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

void write_report() {
  std::string text = "nvrtc-cache-report 1\n";
  for (const ReportedLibrary& l : g_libraries) {
    if (!l.ready.load(std::memory_order_acquire)) continue;
    text += l.line;
    text += '\t' + std::to_string(l.calls.load(std::memory_order_relaxed)) + '\n';
  }
  const std::string pid = std::to_string(::getpid());
  const std::string final_path = std::string(g_dir) + "/" + pid + ".report";
  const std::string temporary = std::string(g_dir) + "/." + pid + "." + std::to_string(::gettid()) + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const bool whole = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!whole || ::rename(temporary.c_str(), final_path.c_str()) != 0) ::unlink(temporary.c_str());
}

}  // namespace

void note_reached_call(const char* library, const void* link_map, const void* code,
                       const keying::LibraryIdentity& identity) noexcept {
  if (!enabled()) return;
  const platform::ErrnoGuard errno_guard;
  try {
    if (!g_atfork.exchange(true)) (void)::pthread_atfork(nullptr, nullptr, zero_counts_in_child);
    const void* key = link_map != nullptr ? link_map : code;
    for (ReportedLibrary& l : g_libraries) {
      const void* current = l.map.load(std::memory_order_acquire);
      if (current == nullptr) {
        if (l.map.compare_exchange_strong(current, key)) {  // this call claimed it: fill it in
          std::string path = interpose::library_path_of(link_map, code);
          for (char& c : path) {
            if (c == '\t' || c == '\n') c = '?';
          }
          std::snprintf(l.line, sizeof l.line, "%s\t%s\t%d.%d\t%s", library, path.c_str(), identity.major,
                        identity.minor, hex(identity.build_id).c_str());
          l.ready.store(true, std::memory_order_release);
        } else if (current != key) {
          continue;
        }
      } else if (current != key) {
        continue;
      }
      l.calls.fetch_add(1, std::memory_order_relaxed);
      write_report();
      return;
    }
  } catch (...) {
  }
}

}  // namespace nvrtc_cache::shim
