// CompileWatch: records, on the compiling thread only, what NVRTC observes through libc while a
// real nvrtcCompileProgram runs: files opened, paths probed (stat/access/realpath, found or not) and
// environment variables read. The libc entry points are interposed in shim/file_watch.cc.
// Contract: a watch is active on the thread that constructed it until destruction; other threads
// are never recorded and pay one thread-local load per libc call. The interposers never allocate
// (events go into a buffer reserved before the compile), never recurse, and preserve errno and
// every return value. A nested or overflowing record taints the watch (the compile is then not
// cached). Watches do not nest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace nvrtc_cache::shim {

enum class WatchEventKind : std::uint8_t { kOpen, kStat, kAccess, kRealpath, kOpendir, kReadlink, kGetenv };

struct WatchEvent {
  WatchEventKind kind;
  bool succeeded;  // the file/path existed, or the variable was set
  std::string_view subject;  // path or variable name (points into the watch's buffer)
  std::string_view value;    // for kGetenv: the value read
  const void* caller;        // return address of the libc call (which object asked)
};

class CompileWatch {
 public:
  CompileWatch();
  ~CompileWatch();
  CompileWatch(const CompileWatch&) = delete;
  CompileWatch& operator=(const CompileWatch&) = delete;

  // Stops recording (idempotent); events stay readable.
  void stop();

  bool tainted() const;
  std::size_t event_count() const;
  WatchEvent event(std::size_t index) const;

  struct Buffer;

 private:
  std::unique_ptr<Buffer> buffer_;
  bool active_ = false;
};

// True if a set variable of this name can change NVRTC's output (everything but a short list of
// variables known not to, such as PWD).
bool environment_variable_affects_output(std::string_view name);

}  // namespace nvrtc_cache::shim
