// ClaimRenewer: keeps this process's cross-node claims alive while it compiles. A claim is taken
// with a short lease (kClaimLease); one background thread renews every held claim a third of the
// way through its lease, so a claim outlives its holder by one lease at most (a holder killed,
// stopped by SIGSTOP or cut off from the tier), and a waiter can tell a claim that is not one of
// ours (a longer lease than any holder sets) from a genuine one.
// Contract (threads): add() and remove() are thread-safe and never block on a tier (renewals run
// outside the lock, on the renewer thread, started at the first add() and detached). A renewal
// that answers false (the claim is no longer ours) drops the entry.
// Contract (fork): the process instance's mutex is platform::ForkRank::kClaimRenewals; a child drops
// the entries it inherited (its parent renews them) at its first add() and starts its own thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace nvrtc_cache::store::remote {

// The lease a holder takes and renews; a claim whose remaining lease is longer than
// kLongestGenuineLease was not set by a holder of this version and is not waited for.
inline constexpr std::chrono::milliseconds kClaimLease{5000};
inline constexpr std::chrono::milliseconds kLongestGenuineLease = kClaimLease + std::chrono::milliseconds(1000);

class ClaimRenewer {
 public:
  // Renews the claim (true: still ours, renewed; false: gone or another's).
  using Renew = std::function<bool()>;

  ClaimRenewer() = default;
  // Stops this process's renewer thread (tests; the process instance is never destroyed).
  ~ClaimRenewer();
  ClaimRenewer(const ClaimRenewer&) = delete;
  ClaimRenewer& operator=(const ClaimRenewer&) = delete;

  // Renews the claim every `lease` / 3 until remove(); 0 when the renewer cannot be started (the
  // claim then lives one lease).
  std::uint64_t add(Renew renew, std::chrono::milliseconds lease);
  void remove(std::uint64_t id);
  std::size_t held() const;

  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child();

 private:
  struct Entry {
    Renew renew;
    std::chrono::milliseconds period;
    std::chrono::steady_clock::time_point due;
  };
  void run();

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::condition_variable stopped_;
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t next_id_ = 1;
  pid_t owner_pid_ = 0;  // the process whose thread renews these entries (0: none yet)
  bool thread_alive_ = false;
  bool stopping_ = false;
};

// The process's renewer (leaked; created at load and joined to the fork order).
ClaimRenewer& process_claim_renewer();

}  // namespace nvrtc_cache::store::remote
