#include "store/fork_locks.h"

#include <pthread.h>

#include <cerrno>

namespace nvrtc_cache::store {
namespace {

constexpr int kRanks = static_cast<int>(ForkRank::kCount);

// Written only by library constructors (single-threaded), read by the fork handlers.
ForkParticipant g_participants[kRanks] = {};
bool g_installed = false;

void prepare() {
  const int saved_errno = errno;
  for (const ForkParticipant& p : g_participants) {
    if (p.prepare) p.prepare();
  }
  errno = saved_errno;
}

void in_parent() {
  const int saved_errno = errno;
  for (int rank = kRanks - 1; rank >= 0; --rank) {
    if (const auto fn = g_participants[rank].in_parent) fn();
  }
  errno = saved_errno;
}

void in_child() {
  const int saved_errno = errno;
  for (int rank = kRanks - 1; rank >= 0; --rank) {
    if (const auto fn = g_participants[rank].in_child) fn();
  }
  errno = saved_errno;
}

}  // namespace

void join_fork_order(ForkRank rank, ForkParticipant participant) {
  const int index = static_cast<int>(rank);
  if (index < 0 || index >= kRanks) return;
  g_participants[index] = participant;
  if (!g_installed) {
    g_installed = true;
    pthread_atfork(&prepare, &in_parent, &in_child);
  }
}

}  // namespace nvrtc_cache::store
