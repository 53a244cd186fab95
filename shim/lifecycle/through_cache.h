// through_cache: the one flow every cached call takes, whatever the library and the OS — key its
// inputs -> look the key up (the library validates what it finds) -> serve it, or claim the key
// (waiting for another call's result, which is then served) -> run the real call under the host's
// watch -> keep the result (count, store, record). It runs over the OS's host (jit_host.h) and one
// call of a library (a Call: NVRTC's compile in compile_lifecycle.cc, a link or NVVM compile in
// handle_lifecycle.h), which provides:
//   using Result;                                          the library's return type
//   core::JitLibrary library() const;
//   void prepare(JitHost&);                                keys the inputs
//   const keying::CacheKey& key() const;                   the key claims are taken on
//   bool look_up(store::Store&, core::StatsDeltas&, std::int64_t* validate_ns);   a fresh look-up
//   Result serve(JitHost&, const HitTimes&);               serves what look_up found, counting the hit
//   Miss miss(store::Store&);                              why the last look-up missed
//   WatchedCall run_real(JitHost&, Result* rc);            the real call, through host.run_watched
//   std::string label_after_call();                        what the log calls it, once the library returned
//   void keep(JitHost&, store::Store*, Result, WatchedCall&, const Miss&);   counts and stores a miss
//   void finish(JitHost&);                                 after a miss was kept (or failed to be)
// Contract: thread-safe where the Call's parts are (distinct handles); an exception before the real
// call propagates (the caller fails open by making the call uncached), one after it is counted as
// an error, logged once and the real result stands; `*error_after` is left alone on a hit (the
// caller's state stands) and set to the library's after a real call.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/jit_library.h"
#include "core/log.h"
#include "core/stats.h"
#include "shim/lifecycle/jit_host.h"
#include "store/store.h"

namespace nvrtc_cache::shim {

// Why a look-up missed: decided where it missed (the statistics' reason: NVRTC's row) and said in the log.
struct Miss {
  std::string reason = "the cache is unavailable";
  core::Counter counter = core::Counter::miss_other;
};

// When a hit's phases ended, for its latency split.
struct HitTimes {
  SteadyClock::time_point started, keyed, looked_up;
  std::int64_t validate_ns = 0;  // of the look-up that found it
  std::int64_t wait_ns = 0;      // waiting for another call's result (the last look-up falls inside it)
};

// Counts a hit of `library`: its latency split (keying: started..keyed; lookup: keyed..looked_up less
// validation and waiting; validation) and the time it saved against `call_nanos`, the real call's
// when it was stored.
void count_hit(core::StatsDeltas& stats, core::JitLibrary library, const HitTimes& times, std::int64_t call_nanos);

template <typename Call>
typename Call::Result through_cache(JitHost& host, Call& call, int* error_after) {
  HitTimes times;
  times.started = SteadyClock::now();
  call.prepare(host);
  times.keyed = SteadyClock::now();
  store::Store* store = host.store();
  Miss miss;
  Flight flight;  // a held claim makes other calls of this key wait for its result; released at return
  if (store) {
    bool found = call.look_up(*store, host.stats(), &times.validate_ns);
    if (!found && !host.store_read_only()) {
      flight = host.claim_or_wait(call.key(),
                                  [&] { return found = call.look_up(*store, host.stats(), &times.validate_ns); });
    }
    if (found) {
      times.looked_up = SteadyClock::now();
      times.wait_ns = flight.wait_ns;
      return call.serve(host, times);
    }
    miss = call.miss(*store);
  }
  typename Call::Result rc{};
  WatchedCall watched = call.run_real(host, &rc);
  *error_after = watched.error_after;
  try {  // the real call stands: from here on only the caching can fail
    // Said once the library returned: by then its output names what has no better name, as `ls` will.
    core::log_info([&] {
      return "miss " + call.label_after_call() + ": " + miss.reason + " (" + core::library_name(call.library()) +
             " took " + std::to_string(watched.nanos / 1000000) + " ms)";
    });
    if (watched.internal_error) throw std::runtime_error("recording the dependencies failed");
    call.keep(host, store, rc, watched, miss);
  } catch (...) {
    host.stats().add(core::Counter::errors);
    core::log_once(core::LogLevel::kError, "store-exception", "internal error while storing a result; not cached");
  }
  call.finish(host);
  return rc;
}

}  // namespace nvrtc_cache::shim
