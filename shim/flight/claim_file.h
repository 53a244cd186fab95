// Claim files: one compile per key at a time, between the threads of a process and between the
// processes of a node, without a server. A claim is an exclusive lock that the system drops when its
// holder dies (kill -9, TerminateProcess, a crash) on the file <claims dir>/<name>; every attempt
// opens the file itself, so threads of one process conflict like processes do. This file is the
// protocol, the same on every system; shim/flight/claim_lock.h is the system's half (Linux: an
// open-file-description lock, fcntl F_OFD_SETLK; Windows: LockFileEx).
//
// Protocol. A claimant opens (creating) the file and tries the lock. Acquired on the file that is
// still at the path: it holds the claim (after result_ready() says there is still nothing to wait
// for). Refused: it waits, polling the lock with sleeps growing from 1 ms to 20 ms and asking
// result_ready() between polls. A holder releases by removing the file and then closing it, so a
// claimant that gets the lock on a file no longer at the path knows the holder finished: it is
// served if result_ready(), else the holder's result is not one it can use and it compiles
// without a claim (so a program that turns out uncacheable is compiled by its waiters in
// parallel, not one after another). A claimant that cannot open the file because its holder is
// removing it (Windows) concludes the same. A claimant that gets the lock on the file still at the
// path after waiting took over from a holder that died. Nothing accumulates: every held claim's file
// is removed at release; a holder killed leaves one empty file, reused by the next claimant.
//
// Contract: thread-safe; throws only std::bad_alloc or what result_ready() throws (no handle leaks
// then); preserves errno (and the last-error value); never blocks past the timeout. Fork, the
// directory's checks and how files are opened: shim/claim_lock.h. A ClaimDirectory outlives the
// claims it gives (the shim's is never destroyed).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <memory>

#include "shim/flight/claim_lock.h"

namespace nvrtc_cache::shim {

// A held claim (or none). Released on destruction.
class Claim {
 public:
  Claim() = default;
  Claim(Claim&& other) noexcept;
  Claim& operator=(Claim&& other) noexcept;
  Claim(const Claim&) = delete;
  Claim& operator=(const Claim&) = delete;
  ~Claim() { release(); }

  bool held() const { return file_ != claim_lock::kNoFile; }
  // Removes the claim file, then closes it (dropping the lock): waiters find the result or compile.
  void release();

 private:
  friend class ClaimDirectory;
  Claim(claim_lock::FileHandle file, const claim_lock::Folder* folder, std::string name);
  claim_lock::FileHandle file_ = claim_lock::kNoFile;
  const claim_lock::Folder* folder_ = nullptr;  // the ClaimDirectory's (borrowed)
  std::string name_;
  std::chrono::steady_clock::time_point acquired_;
};

enum class ClaimOutcome {
  kClaimed,         // this caller holds the claim: compile, store, then release
  kReady,           // result_ready() returned true (maybe after waiting): serve that result
  kHolderFinished,  // the holder released without a result this caller can use: compile unclaimed
  kTimedOut,        // a live holder kept the claim past the timeout: compile unclaimed
  kHolderStopped,   // the holder is stopped (SIGSTOP, a debugger): compile unclaimed, without waiting it out
  kUnavailable,     // claims cannot be used here (ClaimAttempt::problem says why): compile unclaimed
};

struct ClaimAttempt {
  ClaimOutcome outcome = ClaimOutcome::kUnavailable;
  Claim claim;                   // held exactly when outcome is kClaimed
  bool waited = false;           // another caller held the claim at the first try
  std::int64_t wait_ns = 0;      // time from the first refused try to the outcome
  std::string problem;           // kUnavailable: why
  std::shared_ptr<void> across;  // kClaimed: the cross-node claim on a shared tier, if one was taken
                                 // (shim/flight/single_flight.h; released when the last owner drops it)
};

class ClaimDirectory {
 public:
  // Creates `path` if missing and checks it; on failure every attempt is kUnavailable.
  ClaimDirectory(std::string path, bool shared);

  bool usable() const { return folder_.problem().empty(); }
  // Why the directory is unusable (empty when usable).
  const std::string& problem() const { return folder_.problem(); }
  const std::string& path() const { return path_; }

  // Claims `name` (a file name: no '/') or waits for its holder for at most `timeout`.
  // `on_wait` is called once, when the first try is refused.
  ClaimAttempt claim_or_wait(std::string_view name, std::chrono::nanoseconds timeout,
                             const std::function<bool()>& result_ready, const std::function<void()>& on_wait = {});

 private:
  // The outcome once the lock on `file` (the file `name` in the directory) is this caller's.
  // Takes ownership of `file`.
  void settle_locked(claim_lock::FileHandle file, const std::string& name, const std::function<bool()>& result_ready,
                     ClaimAttempt& out) const;

  std::string path_;
  claim_lock::Folder folder_;
};

// The longest time a claim of this process was held (a compile and its store), for the default
// timeout.
std::chrono::nanoseconds longest_claim_held();

// The wait timeout when none is configured: twice the longest claim held in this process plus 30 s,
// from 2 to 10 minutes.
std::chrono::nanoseconds default_wait_timeout(std::chrono::nanoseconds longest_held);

}  // namespace nvrtc_cache::shim
