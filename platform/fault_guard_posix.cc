// The fault guard (platform/fault_guard.h) on POSIX: SIGSEGV and SIGBUS handlers, sigsetjmp/siglongjmp.
#include "platform/fault_guard.h"

#include <csetjmp>
#include <atomic>
#include <csignal>
#include <mutex>

#include <pthread.h>

#include "platform/fork_locks.h"

namespace nvrtc_cache::platform {
namespace {

thread_local sigjmp_buf* t_jump = nullptr;
struct sigaction g_previous_segv;
struct sigaction g_previous_bus;

void on_fault(int signal, siginfo_t* info, void* context) {
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

}  // namespace nvrtc_cache::platform
