// The fork order (platform/fork_locks.h) on POSIX: one pthread_atfork handler for every participant.
#include "platform/fork_locks.h"
#include "platform/errno_guard.h"

#include <pthread.h>

#include <cerrno>

namespace nvrtc_cache::platform {
namespace {

constexpr int kRanks = static_cast<int>(ForkRank::kCount);

// Written only by library constructors (single-threaded), read by the fork handlers.
ForkParticipant g_participants[kRanks] = {};
bool g_atfork_handlers_installed = false;

void prepare() {
  const ErrnoGuard errno_guard;
  for (const ForkParticipant& p : g_participants) {
    if (p.prepare) p.prepare();
  }
}

void in_parent() {
  const ErrnoGuard errno_guard;
  for (int rank = kRanks - 1; rank >= 0; --rank) {
    if (const auto fn = g_participants[rank].in_parent) fn();
  }
}

void in_child() {
  const ErrnoGuard errno_guard;
  for (int rank = kRanks - 1; rank >= 0; --rank) {
    if (const auto fn = g_participants[rank].in_child) fn();
  }
}

}  // namespace

void join_fork_order(ForkRank rank, ForkParticipant participant) {
  const int index = static_cast<int>(rank);
  if (index < 0 || index >= kRanks) return;
  g_participants[index] = participant;
  if (!g_atfork_handlers_installed) {
    g_atfork_handlers_installed = true;
    pthread_atfork(&prepare, &in_parent, &in_child);
  }
}

}  // namespace nvrtc_cache::platform
