#include "store/bounded_writes.h"

#include <condition_variable>
#include <mutex>
#include <string>

#include "platform/errno_guard.h"
#include "platform/fork_locks.h"
#include "store/remote/write_behind.h"

namespace nvrtc_cache::store {
namespace {

remote::WriteBehind& make_local_writer() {
  // Bounded by count and bytes like the shared tiers' queue; a job that does not fit fails at once.
  static auto* instance = new remote::WriteBehind(remote::WriteBehind::Limits{256, 64u << 20});  // leaked
  return *instance;
}

__attribute__((constructor)) void register_local_writer() {
  platform::join_fork_order_of<&make_local_writer>(platform::ForkRank::kLocalWrites);
}

// One write's outcome, shared by the job and its caller (who may stop waiting first).
struct Completion {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  Status status = Status::ok();
};

}  // namespace

BoundedWrites::BoundedWrites(std::unique_ptr<Store> inner, std::chrono::milliseconds bound)
    : inner_(std::move(inner)), bound_(bound), overdue_(std::make_shared<std::atomic<int>>(0)) {}

Status BoundedWrites::run(std::function<Status(Store&)> write, std::size_t bytes) {
  const platform::ErrnoGuard errno_guard;
  try {
    auto completion = std::make_shared<Completion>();
    auto job = [inner = inner_, completion, write = std::move(write)] {
      Status status = write(*inner);
      std::lock_guard lock(completion->mu);
      completion->status = std::move(status);
      completion->done = true;
      completion->done_cv.notify_all();
    };
    if (!make_local_writer().enqueue(std::move(job), bytes)) {
      return Status::io_error("the cache's write queue is full (a write is waiting for another process); not written");
    }
    // While an earlier write is overdue (the lock is held elsewhere), do not wait again.
    const auto wait = overdue_->load(std::memory_order_acquire) > 0 ? std::chrono::milliseconds(0) : bound_;
    std::unique_lock lock(completion->mu);
    if (completion->done_cv.wait_for(lock, wait, [&] { return completion->done; })) return completion->status;
    lock.unlock();
    late_.fetch_add(1, std::memory_order_relaxed);
    // Counted overdue until it completes (a second job clears the mark when this one is done).
    overdue_->fetch_add(1, std::memory_order_acq_rel);
    (void)make_local_writer().enqueue([overdue = overdue_] { overdue->fetch_sub(1, std::memory_order_acq_rel); }, 0,
                                      /*always=*/true);
    return Status::io_error("another process has held the cache's write lock for over " +
                            std::to_string(bound_.count()) + " ms; not written now (it will be when the lock frees)");
  } catch (...) {
    return Status::io_error("internal error while queueing a write");
  }
}

Status BoundedWrites::put(std::string_view key, std::string_view value) {
  return run([k = std::string(key), v = std::string(value)](Store& s) { return s.put(k, v); },
             key.size() + value.size());
}

Status BoundedWrites::erase(std::string_view key) {
  return run([k = std::string(key)](Store& s) { return s.erase(k); }, key.size());
}

Status BoundedWrites::clear() {
  return run([](Store& s) { return s.clear(); }, 0);
}

Status BoundedWrites::add_counters(const Counters& deltas) {
  std::size_t bytes = 0;
  for (const auto& [name, value] : deltas) bytes += name.size() + sizeof value;
  return run([deltas](Store& s) { return s.add_counters(deltas); }, bytes);
}

void BoundedWrites::close() {
  (void)run(
      [](Store& s) {
        s.close();
        return Status::ok();
      },
      0);
}

}  // namespace nvrtc_cache::store
