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

#include "keying/dependencies.h"

namespace nvrtc_cache::shim {

using WatchEventKind = keying::ObservationKind;

struct WatchEvent {
  keying::Observation observation;  // strings point into the watch's buffer
  const void* caller;               // return address of the libc call (which object asked)
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

}  // namespace nvrtc_cache::shim
