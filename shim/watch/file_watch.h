// CompileWatch: records, on the compiling thread, what NVRTC observes through libc while a real
// nvrtcCompileProgram runs: files opened, paths probed (stat/access/realpath/readlink, found or
// not), directories listed and environment variables read. The libc entry points are the ones in
// shim/watch/watched_libc.def, interposed in shim/watch/libc_interposers.cc (or, where a library
// binds them directly, redirected by shim/watch/import_patch.h); the record lives here.
// Contract: a watch records the thread that constructed it until stop() or destruction. The
// record grows in an mmap-backed arena (reserved at construction, committed in steps from inside
// the hooks with raw syscalls: the hooks never allocate, never call dlsym, never recurse, and
// preserve errno and every return value) up to kCaptureBoundBytes; beyond that, and on anything
// else the record cannot vouch for, the watch is tainted (the compile is then not cached) and
// why_tainted() says why. Another thread's watched call made from inside NVRTC's code while any
// watch is active taints every watch active at that moment: NVRTC reading on a helper thread would
// otherwise go unseen. Watches do not nest. fork: a child inherits the parent's arena mapping;
// a watch is only ever stopped on the thread that made it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "direct/dependencies.h"

namespace nvrtc_cache::shim::watch {

using WatchEventKind = direct::ObservationKind;

struct WatchEvent {
  direct::Observation observation;  // strings point into the watch's arena
  const void* caller;               // return address of the libc call (which object asked)
};

// Events and path text of one compile, together.
inline constexpr std::size_t kCaptureBoundBytes = std::size_t{64} << 20;

class CompileWatch {
 public:
  // `nvrtc_code`: an address inside the real NVRTC being called (its code, and that of any loaded
  // NVRTC builtins library, is what "called from inside NVRTC" means for other threads); nullptr:
  // only the ranges registered so far.
  explicit CompileWatch(const void* nvrtc_code = nullptr);
  ~CompileWatch();
  CompileWatch(const CompileWatch&) = delete;
  CompileWatch& operator=(const CompileWatch&) = delete;

  // Stops recording (idempotent); events stay readable. Call on the constructing thread.
  void stop();

  bool tainted() const;
  std::string why_tainted() const;
  // The statistics' reason for it: NVRTC listed a directory, or something its reads cannot be followed through.
  direct::NotRecorded taint_reason() const;  // "" when not tainted
  std::size_t event_count() const;
  std::size_t bytes_used() const;  // of the arena
  // Visits the events in the order they happened. Only after stop().
  template <typename Visit>
  void for_each_event(Visit&& visit) const {
    for (std::size_t offset = 0; offset < bytes_used();) visit(event_at(offset));
  }

  struct Buffer;

  // Test seam: replaces the "is this return address inside NVRTC" check of other threads' calls
  // (nullptr restores the real one, which uses the registered code ranges).
  using CallerCheck = bool (*)(const void* caller);
  static void set_caller_check_for_testing(CallerCheck check);

 private:
  WatchEvent event_at(std::size_t& offset) const;  // advances offset to the next event

  std::unique_ptr<Buffer> buffer_;
  bool active_ = false;
};

// Registers the executable code of the loaded object containing `address_in_nvrtc`, and of every
// loaded NVRTC builtins library, as NVRTC's, and redirects each such library's own imports of the
// watched libc functions to the hooks (shim/watch/import_patch.h), so NVRTC is observed even where
// the shim's exports do not interpose (a proxy loaded RTLD_LOCAL, NVRTC loaded RTLD_DEEPBIND).
// Idempotent (each library once); takes the loader lock and the registry's lock
// (platform::ForkRank::kNvrtcCode); never call from a hook. Returns false when no loaded object
// contains the address.
bool register_nvrtc_code(const void* address_in_nvrtc);

// What registration did to the registered libraries' imports, summed (for tests and measurements).
struct ImportRedirection {
  int libraries = 0;       // libraries whose imports were examined
  int redirected = 0;      // GOT slots pointed at a hook
  int already = 0;         // slots that held the hook already (the exports interpose there)
  int left = 0;            // watched imports bound elsewhere (another interposer), left alone
  std::int64_t nanos = 0;  // time spent examining and redirecting
};
ImportRedirection import_redirection_so_far();
// True if `address` lies in code registered by register_nvrtc_code (lock-free, allocation-free).
bool address_in_nvrtc_code(const void* address);

}  // namespace nvrtc_cache::shim::watch
