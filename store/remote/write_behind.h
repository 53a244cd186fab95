// WriteBehind: runs shared-tier writes off the compile's path, on one background thread per
// process, from a queue bounded by count and bytes (a job that does not fit is dropped and the
// caller counts it). At exit, flush() waits a bounded time (at most 1 s) for the queue to drain.
// Contract (threads): enqueue() and flush() are thread-safe and never block on a tier; jobs run one
// at a time, in the order enqueued, on the writer thread, which is started at the first enqueue and
// detached (a job that hangs past exit does not hold the process: exit does not wait for it).
// Contract (fork): the process instance's mutex is platform::ForkRank::kWriteBehind; a child starts
// its own writer lazily at its first enqueue and drops the jobs it inherited (the parent writes
// them). Jobs must not throw; one that does is abandoned.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

namespace nvrtc_cache::store::remote {

class WriteBehind {
 public:
  struct Limits {
    std::size_t max_jobs = 1024;
    std::size_t max_bytes = 256u << 20;
  };
  explicit WriteBehind(Limits limits) : limits_(limits) {}
  // Stops this process's writer thread after the job it is running, dropping the queue (tests; the
  // process instance is never destroyed).
  ~WriteBehind();
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;

  // Queues `job`, which weighs `bytes`; false (dropped) when the queue is full or the writer thread
  // cannot be started. `always` jobs (claim releases: small, and must not be lost) are queued past the
  // limits.
  bool enqueue(std::function<void()> job, std::size_t bytes, bool always = false);
  // Waits until every queued job has run or `deadline` passes; true when drained.
  bool flush(std::chrono::steady_clock::time_point deadline);
  std::size_t queued() const;

  // The fork handlers of the process instance.
  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void renew_in_child();

 private:
  struct Job {
    std::function<void()> run;
    std::size_t bytes;
  };
  void run_writer();

  const Limits limits_;
  mutable std::mutex mu_;
  std::condition_variable work_;
  std::condition_variable idle_;
  std::deque<Job> jobs_;
  std::size_t bytes_ = 0;
  bool running_ = false;       // the writer is running a job
  pid_t writer_pid_ = 0;       // the process whose writer thread serves this queue (0: none yet)
  bool writer_alive_ = false;  // that thread has not returned yet
  bool stopping_ = false;
};

// The process's writer (leaked; created at load and joined to the fork order).
WriteBehind& process_write_behind();

}  // namespace nvrtc_cache::store::remote
