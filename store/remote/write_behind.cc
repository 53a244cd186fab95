#include "store/remote/write_behind.h"

#include <unistd.h>

#include <thread>

#include "platform/fork_locks.h"

namespace nvrtc_cache::store::remote {

bool WriteBehind::enqueue(std::function<void()> job, std::size_t bytes, bool always) {
  bool start = false;
  {
    std::lock_guard lock(mu_);
    const pid_t pid = ::getpid();
    if (writer_pid_ != pid) {
      // First job of this process (or of a forked child): the inherited jobs are the parent's.
      jobs_.clear();
      bytes_ = 0;
      running_ = false;
      writer_pid_ = pid;
      writer_alive_ = true;
      start = true;
    }
    if (!always &&
        (jobs_.size() >= limits_.max_jobs || bytes > limits_.max_bytes - std::min(bytes_, limits_.max_bytes))) {
      if (!start) return false;
    } else {
      jobs_.push_back({std::move(job), bytes});
      bytes_ += bytes;
    }
  }
  if (start) {
    try {
      std::thread([this] { run_writer(); }).detach();
    } catch (...) {
      std::lock_guard lock(mu_);
      writer_pid_ = 0;  // try again at the next job; these are dropped
      writer_alive_ = false;
      jobs_.clear();
      bytes_ = 0;
      idle_.notify_all();
      return false;
    }
  }
  work_.notify_one();
  return true;
}

void WriteBehind::run_writer() {
  const pid_t pid = ::getpid();
  std::unique_lock lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return !jobs_.empty() || writer_pid_ != pid || stopping_; });
    if (writer_pid_ != pid || stopping_) {
      if (writer_pid_ == pid) writer_alive_ = false;
      idle_.notify_all();
      return;
    }
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    running_ = true;
    lock.unlock();
    try {
      job.run();
    } catch (...) {
    }
    job.run = nullptr;  // destroy what the job holds outside the lock
    lock.lock();
    bytes_ -= std::min(bytes_, job.bytes);
    running_ = false;
    if (jobs_.empty()) idle_.notify_all();
  }
}

WriteBehind::~WriteBehind() {
  std::unique_lock lock(mu_);
  if (writer_pid_ != ::getpid()) return;
  stopping_ = true;
  jobs_.clear();
  work_.notify_all();
  idle_.wait(lock, [&] { return !writer_alive_; });
}

bool WriteBehind::flush(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  if (writer_pid_ != ::getpid()) return true;  // nothing queued by this process
  return idle_.wait_until(lock, deadline, [&] { return jobs_.empty() && !running_; });
}

std::size_t WriteBehind::queued() const {
  std::lock_guard lock(mu_);
  return writer_pid_ == ::getpid() ? jobs_.size() : 0;
}

void WriteBehind::renew_in_child() {
  platform::renew_in_child(mu_);
  std::construct_at(&work_);
  std::construct_at(&idle_);
  // The queue itself is dropped at the child's first enqueue (writer_pid_ is the parent's).
}

namespace {
WriteBehind& make_process_write_behind() {
  static WriteBehind* instance = new WriteBehind(WriteBehind::Limits{});  // leaked; created at load
  return *instance;
}
__attribute__((constructor)) void register_write_behind() {
  platform::join_fork_order_of<&make_process_write_behind>(platform::ForkRank::kWriteBehind);
}
}  // namespace

WriteBehind& process_write_behind() { return make_process_write_behind(); }

}  // namespace nvrtc_cache::store::remote
