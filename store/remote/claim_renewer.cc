#include "store/remote/claim_renewer.h"

#include <unistd.h>

#include <thread>
#include <vector>

#include "platform/fork_locks.h"

namespace nvrtc_cache::store::remote {

using Clock = std::chrono::steady_clock;

std::uint64_t ClaimRenewer::add(Renew renew, std::chrono::milliseconds lease) {
  bool start = false;
  std::uint64_t id = 0;
  {
    std::lock_guard lock(mu_);
    const pid_t pid = ::getpid();
    if (owner_pid_ != pid) {
      entries_.clear();  // a forked child: the parent renews what it inherited
      owner_pid_ = pid;
      thread_alive_ = true;
      start = true;
    }
    const auto period = std::max(lease / 3, std::chrono::milliseconds(1));
    id = next_id_++;
    entries_.emplace(id, Entry{std::move(renew), period, Clock::now() + period});
  }
  if (start) {
    try {
      std::thread([this] { run(); }).detach();
    } catch (...) {
      std::lock_guard lock(mu_);
      owner_pid_ = 0;
      thread_alive_ = false;
      entries_.clear();
      stopped_.notify_all();
      return 0;
    }
  }
  changed_.notify_one();
  return id;
}

void ClaimRenewer::remove(std::uint64_t id) {
  if (id == 0) return;
  std::lock_guard lock(mu_);
  if (owner_pid_ == ::getpid()) entries_.erase(id);
}

std::size_t ClaimRenewer::held() const {
  std::lock_guard lock(mu_);
  return owner_pid_ == ::getpid() ? entries_.size() : 0;
}

void ClaimRenewer::run() {
  const pid_t pid = ::getpid();
  std::unique_lock lock(mu_);
  for (;;) {
    if (owner_pid_ != pid || stopping_) break;
    if (entries_.empty()) {
      changed_.wait(lock);
      continue;
    }
    Clock::time_point next = Clock::time_point::max();
    for (const auto& [id, entry] : entries_) next = std::min(next, entry.due);
    if (Clock::now() < next) {
      changed_.wait_until(lock, next);
      continue;
    }
    std::vector<std::pair<std::uint64_t, Renew>> due;
    for (auto& [id, entry] : entries_) {
      if (entry.due > Clock::now()) continue;
      entry.due = Clock::now() + entry.period;
      due.emplace_back(id, entry.renew);
    }
    lock.unlock();
    std::vector<std::uint64_t> lost;
    for (auto& [id, renew] : due) {
      bool still_ours = true;
      try {
        still_ours = renew();
      } catch (...) {
      }
      if (!still_ours) lost.push_back(id);
    }
    due.clear();  // destroy what the renewals hold outside the lock
    lock.lock();
    if (owner_pid_ == pid) {
      for (std::uint64_t id : lost) entries_.erase(id);
    }
  }
  if (owner_pid_ == pid) thread_alive_ = false;
  stopped_.notify_all();
}

ClaimRenewer::~ClaimRenewer() {
  std::unique_lock lock(mu_);
  if (owner_pid_ != ::getpid()) return;
  stopping_ = true;
  entries_.clear();
  changed_.notify_all();
  stopped_.wait(lock, [&] { return !thread_alive_; });
}

void ClaimRenewer::renew_in_child() {
  platform::renew_in_child(mu_);
  std::construct_at(&changed_);
  std::construct_at(&stopped_);
  // The entries are dropped at the child's first add() (owner_pid_ is the parent's).
}

namespace {
ClaimRenewer& make_process_claim_renewer() {
  static ClaimRenewer* instance = new ClaimRenewer();  // leaked; created at load
  return *instance;
}
__attribute__((constructor)) void register_claim_renewer() {
  platform::join_fork_order_of<&make_process_claim_renewer>(platform::ForkRank::kClaimRenewals);
}
}  // namespace

ClaimRenewer& process_claim_renewer() { return make_process_claim_renewer(); }

}  // namespace nvrtc_cache::store::remote
