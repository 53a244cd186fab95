// Claim files: one compile per key at a time, between the threads of a process and between the
// processes of a node, without a server. A claim is an exclusive Linux open-file-description lock
// (fcntl F_OFD_SETLK) on <claims dir>/<name>; every attempt opens the file itself, so threads of
// one process conflict like processes do, and the kernel drops the lock when its holder dies
// (kill -9, crash) or execs.
//
// Protocol. A claimant opens (creating) the file and tries the lock. Acquired on the file that is
// still at the path: it holds the claim (after result_ready() says there is still nothing to wait
// for). Refused: it waits, polling the lock with sleeps growing from 1 ms to 20 ms and asking
// result_ready() between polls. A holder releases by unlinking the file and then closing it, so a
// claimant that gets the lock on a file no longer at the path knows the holder finished: it is
// served if result_ready(), else the holder's result is not one it can use and it compiles
// without a claim (so a program that turns out uncacheable is compiled by its waiters in
// parallel, not one after another). A claimant that gets the lock on the file still at the path
// after waiting took over from a holder that died. Nothing accumulates: every held claim's file
// is unlinked at release; a holder killed leaves one empty file, reused by the next claimant.
//
// Contract: thread-safe; throws only std::bad_alloc or what result_ready() throws (no descriptor leaks
// then); preserves errno; never blocks past the timeout. File descriptors are O_CLOEXEC. Fork: the
// child of a fork closes every claim descriptor it inherited (pthread_atfork), so a claim stays
// the parent's alone: its release frees the waiters even while the child lives, and a child never
// holds a claim of its parent. Filesystem: the directory is created 0700 (0770 when shared) and
// must be a real directory, owned by this user unless shared. It is opened once, by handle (its
// path walked as store/directory_handle.h walks a cache directory, never following its last
// component), and every claim file is then opened (O_NOFOLLOW), checked and unlinked relative to
// that handle, so a directory replaced by a link while a process runs is never followed; a handle
// that no longer names the directory it was opened on (a program closed it) makes claims
// unavailable. A ClaimDirectory outlives the claims it gives (the shim's is never destroyed).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "store/directory_handle.h"
#include "store/remote/remote_claim.h"

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

  bool held() const { return fd_ >= 0; }
  // Unlinks the claim file, then closes it (dropping the lock): waiters find the result or compile.
  void release();

 private:
  friend class ClaimDirectory;
  Claim(int fd, int directory, std::string name);
  int fd_ = -1;
  int directory_ = -1;  // the ClaimDirectory's handle (borrowed)
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
  Claim claim;                        // held exactly when outcome is kClaimed
  bool waited = false;                // another caller held the claim at the first try
  std::int64_t wait_ns = 0;           // time from the first refused try to the outcome
  std::string problem;                // kUnavailable: why
  store::remote::RemoteClaim remote;  // kClaimed: the cross-node claim on a shared tier, if one was taken
};

class ClaimDirectory {
 public:
  // Creates `path` if missing and checks it; on failure every attempt is kUnavailable.
  ClaimDirectory(std::string path, bool shared);

  bool usable() const { return problem_.empty(); }
  // Why the directory is unusable (empty when usable).
  const std::string& problem() const { return problem_; }
  const std::string& path() const { return path_; }

  // Claims `name` (a file name: no '/') or waits for its holder for at most `timeout`.
  // `on_wait` is called once, when the first try is refused.
  ClaimAttempt claim_or_wait(std::string_view name, std::chrono::nanoseconds timeout,
                             const std::function<bool()>& result_ready, const std::function<void()>& on_wait = {});

 private:
  // The outcome once the lock on `fd` (the file `name` in the directory) is this caller's.
  // Takes ownership of `fd`.
  void settle_locked(int fd, const std::string& name, const std::function<bool()>& result_ready,
                     ClaimAttempt& out) const;
  // Whether the handle still names the directory it was opened on.
  bool handle_intact() const;

  std::string path_;
  bool shared_;
  std::string problem_;
  store::DirectoryHandle handle_;
  platform::FileId id_;
};

// The longest time a claim of this process was held (a compile and its store), for the default
// timeout.
std::chrono::nanoseconds longest_claim_held();

// The wait timeout when none is configured: twice the longest claim held in this process plus 30 s,
// from 2 to 10 minutes.
std::chrono::nanoseconds default_wait_timeout(std::chrono::nanoseconds longest_held);

}  // namespace nvrtc_cache::shim
