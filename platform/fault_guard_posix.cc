// The fault guard (platform/fault_guard.h) on POSIX: SIGSEGV and SIGBUS handlers, sigsetjmp/siglongjmp.
#include "platform/fault_guard.h"

#include <csetjmp>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <mutex>

#include <pthread.h>
#include <sys/mman.h>

#include "platform/fork_locks.h"

namespace nvrtc_cache::platform {
namespace {

thread_local sigjmp_buf* t_jump = nullptr;
struct sigaction g_previous_segv;
struct sigaction g_previous_bus;

// The watched mappings (watch_mapping): a slot is taken by moving `begin` from 0 to kTaking, filled,
// then published by storing the real address; the handler reads only published slots.
constexpr std::uintptr_t kTaking = 1;
struct WatchedMapping {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::size_t> length{0};
  std::atomic<void (*)()> on_replaced{nullptr};
};
WatchedMapping g_watched[64];
static_assert(std::atomic<std::uintptr_t>::is_always_lock_free && std::atomic<void (*)()>::is_always_lock_free);

// A fault inside a watched mapping: the range becomes private zero pages and the access is made
// again there. False when the address is in none (or the replacement failed).
bool replace_watched_mapping(const siginfo_t* info) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (WatchedMapping& watched : g_watched) {
    const std::uintptr_t begin = watched.begin.load(std::memory_order_acquire);
    if (begin <= kTaking) continue;
    const std::size_t length = watched.length.load(std::memory_order_relaxed);
    if (address < begin || address - begin >= length) continue;
    if (::mmap(reinterpret_cast<void*>(begin), length, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0) == MAP_FAILED) {
      return false;
    }
    if (void (*on_replaced)() = watched.on_replaced.load(std::memory_order_relaxed)) on_replaced();
    return true;
  }
  return false;
}

void on_fault(int signal, siginfo_t* info, void* context) {
  if (signal == SIGBUS && info != nullptr && replace_watched_mapping(info)) return;
  if (sigjmp_buf* jump = t_jump) {
    t_jump = nullptr;
    siglongjmp(*jump, 1);
  }
  const struct sigaction& previous = signal == SIGSEGV ? g_previous_segv : g_previous_bus;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
    return;
  }
  if ((previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
    return;
  }
  // The default action: restore it; returning re-executes the faulting instruction, which now
  // terminates the process exactly as it would have without the guard.
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal, &default_action, nullptr);
}

// Installing is guarded by a lock of the fork order (ForkRank::kFaultGuard), not std::call_once,
// whose "in progress" state a child forked meanwhile would inherit.
constinit std::mutex g_install_mu;
std::atomic<bool> g_fault_handlers_installed{false};

void install() {
  struct sigaction action = {};
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &g_previous_segv);
  sigaction(SIGBUS, &action, &g_previous_bus);
}

void install_once() {
  if (g_fault_handlers_installed.load(std::memory_order_acquire)) return;
  std::lock_guard lock(g_install_mu);
  if (g_fault_handlers_installed.load(std::memory_order_relaxed)) return;
  install();
  g_fault_handlers_installed.store(true, std::memory_order_release);
}

__attribute__((constructor)) void register_fork_locks() {
  join_fork_order(ForkRank::kFaultGuard,
                  {[] { g_install_mu.lock(); }, [] { g_install_mu.unlock(); }, [] { renew_in_child(g_install_mu); }});
}

}  // namespace

bool run_guarded(void (*fn)(void*), void* arg) {
  install_once();
  sigjmp_buf jump;
  sigjmp_buf* const outer = t_jump;  // guarded calls may nest (an LMDB assert inside a guarded call)
  // The signal mask is not saved (that would be a system call per guarded call); after a jump
  // from the handler the fault signals are unblocked by hand.
  if (sigsetjmp(jump, 0) != 0) {
    t_jump = outer;
    sigset_t faults;
    sigemptyset(&faults);
    sigaddset(&faults, SIGSEGV);
    sigaddset(&faults, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &faults, nullptr);
    return false;
  }
  t_jump = &jump;
  fn(arg);
  t_jump = outer;
  return true;
}

void escape_if_guarded() {
  if (sigjmp_buf* jump = t_jump) {
    t_jump = nullptr;
    siglongjmp(*jump, 1);
  }
}

bool watch_mapping(void* begin, std::size_t length, void (*on_replaced)()) {
  install_once();
  for (WatchedMapping& watched : g_watched) {
    std::uintptr_t expected = 0;
    if (!watched.begin.compare_exchange_strong(expected, kTaking, std::memory_order_acq_rel)) continue;
    watched.length.store(length, std::memory_order_relaxed);
    watched.on_replaced.store(on_replaced, std::memory_order_relaxed);
    watched.begin.store(reinterpret_cast<std::uintptr_t>(begin), std::memory_order_release);
    return true;
  }
  return false;
}

void unwatch_mapping(void* begin) {
  for (WatchedMapping& watched : g_watched) {
    std::uintptr_t expected = reinterpret_cast<std::uintptr_t>(begin);
    if (watched.begin.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
  }
}

}  // namespace nvrtc_cache::platform
