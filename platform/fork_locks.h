// Fork locks: the one pthread_atfork handler for every process-wide lock of the store and the shim,
// so that a child forked while other threads are inside the shim (Python multiprocessing, PyTorch
// DataLoader workers, MPI launchers) never inherits one of them held by a thread it does not have.
//
// Contract (fork): the prepare handler takes every registered lock in rank order, so fork() waits
// until no other thread holds any of them (and no thread is inside an initialisation one of them
// guards); the parent handler releases them; the child handler re-creates each one unlocked and
// resets per-process state, without allocating. The child never unlocks: glibc tells an rwlock's
// writer by thread id, and the child's only thread has a new one. Participants are registered
// from library constructors (single-threaded, before any thread can take their locks); the handler
// is installed with the first registration, so no lock is held while pthread_atfork runs.
// Threads: join_fork_order from library constructors only; publish_once from any thread.
// Implementations: fork_locks_posix.cc (pthread_atfork) and fork_locks_windows.cc (no fork there:
// participants are accepted and never called), chosen by the build. No filesystem access.
//
// Lock order: a thread holding a lock may take only locks of a later rank.
//   kRuntimeCreation  shim/runtime.cc                creating the Runtime (configuration, log file)
//   kStoreOpen        shim/runtime.cc                opening the cache (may take kStoreRegistry,
//                                                    kFaultGuard, kLogTopics; may dlopen liblmdb,
//                                                    which registers no fork handlers)
//   kSlotRegistry     libraries/nvrtc/real_nvrtc.cc   call sites and NVRTC slots (shared mutex; no dl*
//                                                    call and no NVRTC call is made under it)
//   kNvJitLinkSlots   libraries/nvjitlink/real_nvjitlink.cc  call sites and nvJitLink slots (as kSlotRegistry)
//   kNvvmSlots        libraries/nvvm/real_nvvm.cc    call sites and libNVVM slots (as kSlotRegistry)
//   kProgramTable     libraries/nvrtc/program_table.cc          program handle -> recorded inputs (shared mutex)
//   kHandleTable      shim/lifecycle/handle_table.cc nvJitLink / libNVVM handle -> recorded inputs
//                                                    (shared mutex)
//   kVariablesSeen    shim/linux/linux_host.cc       environment variables each library has read
//   kNvrtcCode        shim/watch/file_watch.cc       NVRTC's code ranges and import redirection
//                                                    (takes the loader's lock, no other of the set)
//   kStoreRegistry    store/lmdb/environment_registry.cc  open LMDB environments (may take kFaultGuard)
//   kFaultGuard       platform/fault_guard_posix.cc  installing the SIGSEGV/SIGBUS guard once
//   kLogTopics        core/log.cc                    topics already logged once
//   kWriteBehind      store/remote/write_behind.cc   the shared tiers' write queue (no other lock is
//                                                    taken under it; tier I/O runs outside it)
//   kClaimRenewals    store/remote/claim_renewer.cc  the cross-node claims being renewed (as
//                                                    kWriteBehind)
//   kLocalWrites      store/bounded_writes.cc        the local store's write queue (as kWriteBehind)
//   kResolvers        store/remote/net/address_resolver.cc  the tiers' host-name lookups' state (no
//                                                    other lock is taken under it; getaddrinfo runs
//                                                    outside it)
//   kClaims           shim/flight/claim_file.cc             no lock: the child closes the single-flight
//                                                    claim descriptors it inherited (lock-free)
// None of them is held across a real NVRTC compile, a call to pthread_atfork, or a dlclose that
// could unload a library, so fork() waits at most for a store open or a store operation, never for
// a compile. Not in the set: the locks of each LMDB environment (remap, evict, touch, verify in
// store/lmdb/environment_registry.h): a child never uses an environment opened before fork (it opens its own),
// so it never touches them. The dlsym hook and the libc interposers resolve through atomics only.
// Lazily created singletons are created at load (and reached by the prepare handler through their
// accessor), guarded by a lock of the set, or published lock-free (publish_once below), so no
// child inherits an initialisation "in progress". Cost: one uncontended lock and unlock per rank
// and fork in every process the shim is loaded into. A fork() from a signal handler that
// interrupted a thread holding one of these locks would deadlock in the prepare handler (such a
// fork is not async-signal-safe anyway; _Fork runs no handlers).
#pragma once

#include <atomic>
#include <memory>

namespace nvrtc_cache::platform {

enum class ForkRank : int {
  kRuntimeCreation,
  kStoreOpen,
  kSlotRegistry,
  kNvJitLinkSlots,
  kNvvmSlots,
  kProgramTable,
  kHandleTable,
  kVariablesSeen,
  kNvrtcCode,
  kStoreRegistry,
  kFaultGuard,
  kLogTopics,
  kWriteBehind,
  kClaimRenewals,
  kLocalWrites,
  kResolvers,
  kClaims,
  kCount
};

struct ForkParticipant {
  void (*prepare)() = nullptr;    // takes the lock
  void (*in_parent)() = nullptr;  // releases it
  void (*in_child)() = nullptr;   // re-creates it unlocked, resets state; must not allocate
};

// Registers the participant for `rank` (one per rank); call from a library constructor only.
void join_fork_order(ForkRank rank, ForkParticipant participant);

// Registers the singleton `instance()` returns (leaked, created here, at load, before any thread can
// be inside its creation) through its lock_for_fork(), unlock_in_parent() and renew_in_child().
template <auto instance>
void join_fork_order_of(ForkRank rank) {
  (void)instance();
  join_fork_order(rank, {[] { instance().lock_for_fork(); }, [] { instance().unlock_in_parent(); },
                         [] { instance().renew_in_child(); }});
}

// In a child after fork: a lock of the set, made new and unlocked (its old state is abandoned).
template <typename Lock>
void renew_in_child(Lock& lock) {
  std::construct_at(&lock);
}

// Fork-safe lazy creation without a lock or a static guard: racing threads may each make one, the
// first one published is kept and the others are deleted. A child forked meanwhile simply makes its
// own. `make` returns a new T*.
template <typename T, typename Make>
T* publish_once(std::atomic<T*>& slot, Make make) {
  if (T* existing = slot.load(std::memory_order_acquire)) return existing;
  T* made = make();
  T* expected = nullptr;
  if (slot.compare_exchange_strong(expected, made, std::memory_order_acq_rel)) return made;
  delete made;
  return expected;
}

}  // namespace nvrtc_cache::platform
