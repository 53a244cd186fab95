#include "shim/flight/claim_file.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <utility>

#include "platform/errno_guard.h"

namespace nvrtc_cache::shim {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

std::atomic<std::int64_t> g_longest_held_ns{0};

void note_held(nanoseconds held) {
  std::int64_t longest = g_longest_held_ns.load(std::memory_order_relaxed);
  while (held.count() > longest && !g_longest_held_ns.compare_exchange_weak(longest, held.count())) {
  }
}

// An open claim file that is not (yet) a held claim; closed on destruction.
class ClaimFile {
 public:
  explicit ClaimFile(claim_lock::FileHandle file) : file_(file) {}
  ~ClaimFile() { reset(); }
  ClaimFile(const ClaimFile&) = delete;
  ClaimFile& operator=(const ClaimFile&) = delete;
  claim_lock::FileHandle get() const { return file_; }
  claim_lock::FileHandle release() { return std::exchange(file_, claim_lock::kNoFile); }
  void reset() {
    if (file_ != claim_lock::kNoFile) claim_lock::close(std::exchange(file_, claim_lock::kNoFile));
  }

 private:
  claim_lock::FileHandle file_;
};

void sleep_for(nanoseconds duration) {
  std::this_thread::sleep_for(duration);  // an interrupted sleep only polls sooner
}

bool valid_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\\') == std::string_view::npos && name.find(':') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

}  // namespace

Claim::Claim(claim_lock::FileHandle file, const claim_lock::Folder* folder, std::string name)
    : file_(file), folder_(folder), name_(std::move(name)), acquired_(Clock::now()) {}

Claim::Claim(Claim&& other) noexcept
    : file_(std::exchange(other.file_, claim_lock::kNoFile)),
      folder_(other.folder_),
      name_(std::move(other.name_)),
      acquired_(other.acquired_) {}

Claim& Claim::operator=(Claim&& other) noexcept {
  if (this != &other) {
    release();
    file_ = std::exchange(other.file_, claim_lock::kNoFile);
    folder_ = other.folder_;
    name_ = std::move(other.name_);
    acquired_ = other.acquired_;
  }
  return *this;
}

void Claim::release() {
  if (file_ == claim_lock::kNoFile) return;
  const platform::ErrnoGuard errno_guard;
  // Remove first: whoever then gets the lock on this file sees it is no longer at the path and
  // knows the holder finished. Only our own file: never one that replaced it.
  folder_->remove(file_, name_);
  note_held(std::chrono::duration_cast<nanoseconds>(Clock::now() - acquired_));
  claim_lock::close(std::exchange(file_, claim_lock::kNoFile));
}

ClaimDirectory::ClaimDirectory(std::string path, bool shared) : path_(std::move(path)), folder_(path_, shared) {}

namespace {

// How long a holder may stay stopped before its waiters stop waiting for it (a debugger's breakpoint
// is often brief; a suspended job is not).
constexpr std::chrono::seconds kStoppedHolderGrace{10};

// After a refused lock: the outcome that ends the wait, or nullopt to sleep and poll again (`waited`
// is then the time waited so far; `stopped_since` when the holder was first seen stopped). The path
// first: a holder stores before it removes its file, so a result stored by a holder seen gone is
// found by the look-up after it.
std::optional<ClaimOutcome> wait_ended(claim_lock::FileHandle file, const claim_lock::Folder& folder,
                                       const std::string& name, const std::function<bool()>& result_ready,
                                       Clock::time_point first_refused, nanoseconds timeout, nanoseconds& waited,
                                       Clock::time_point& stopped_since) {
  const bool holder_gone = !folder.still_named(file, name);
  if (result_ready()) return ClaimOutcome::kReady;
  if (holder_gone) return ClaimOutcome::kHolderFinished;
  waited = std::chrono::duration_cast<nanoseconds>(Clock::now() - first_refused);
  if (waited >= timeout) return ClaimOutcome::kTimedOut;
  if (!claim_lock::holder_stopped(file)) {
    stopped_since = Clock::time_point::min();
  } else if (stopped_since == Clock::time_point::min()) {
    stopped_since = Clock::now();
  } else if (Clock::now() - stopped_since >= kStoppedHolderGrace) {
    return ClaimOutcome::kHolderStopped;
  }
  return std::nullopt;
}

}  // namespace

void ClaimDirectory::settle_locked(claim_lock::FileHandle file, const std::string& name,
                                   const std::function<bool()>& result_ready, ClaimAttempt& out) const {
  if (!folder_.still_named(file, name)) {
    claim_lock::close(file);  // its holder removed it: that holder is done
    out.outcome = result_ready() ? ClaimOutcome::kReady : ClaimOutcome::kHolderFinished;
    return;
  }
  // Ours (free, or its holder died). A holder may have stored and released just before we opened
  // the file: look once more before compiling.
  Claim claim(file, &folder_, name);
  claim_lock::mark_holder(file);
  if (result_ready()) {
    out.outcome = ClaimOutcome::kReady;
  } else {
    out.outcome = ClaimOutcome::kClaimed;
    out.claim = std::move(claim);
  }
}

ClaimAttempt ClaimDirectory::claim_or_wait(std::string_view name, nanoseconds timeout,
                                           const std::function<bool()>& result_ready,
                                           const std::function<void()>& on_wait) {
  const platform::ErrnoGuard errno_guard;
  ClaimAttempt out;
  if (!usable()) {
    out.problem = problem();
    return out;
  }
  if (!valid_name(name)) {
    out.problem = "not a claim name: " + std::string(name);
    return out;
  }
  if (!folder_.intact()) {
    out.problem = path_ + ": the directory's descriptor was closed by the program";
    return out;
  }
  const std::string file_name(name);
  std::string problem;
  bool removing = false;
  ClaimFile file(folder_.open(file_name, &problem, &removing));
  if (file.get() == claim_lock::kNoFile) {
    if (removing) {  // its holder released it a moment ago
      out.outcome = result_ready() ? ClaimOutcome::kReady : ClaimOutcome::kHolderFinished;
    } else {
      out.problem = path_ + ": " + problem;
    }
    return out;
  }
  Clock::time_point first_refused;
  Clock::time_point stopped_since = Clock::time_point::min();  // since when the holder is seen stopped
  nanoseconds pause = milliseconds(1);
  while (true) {
    const claim_lock::LockTry locked = claim_lock::try_lock(file.get(), &problem);
    if (locked == claim_lock::LockTry::kLocked) {
      settle_locked(file.release(), file_name, result_ready, out);
      break;
    }
    if (locked == claim_lock::LockTry::kFailed) {
      out.problem = path_ + "/" + file_name + ": " + problem;
      break;
    }
    if (!out.waited) {
      out.waited = true;
      first_refused = Clock::now();
      if (on_wait) on_wait();
    }
    nanoseconds waited{0};
    const std::optional<ClaimOutcome> ended =
        wait_ended(file.get(), folder_, file_name, result_ready, first_refused, timeout, waited, stopped_since);
    if (ended) {
      out.outcome = *ended;
      break;
    }
    sleep_for(std::min<nanoseconds>(pause, timeout - waited));
    pause = std::min<nanoseconds>(pause * 2, milliseconds(20));
  }
  if (out.waited) out.wait_ns = std::chrono::duration_cast<nanoseconds>(Clock::now() - first_refused).count();
  return out;
}

nanoseconds longest_claim_held() { return nanoseconds(g_longest_held_ns.load(std::memory_order_relaxed)); }

nanoseconds default_wait_timeout(nanoseconds longest_held) {
  const nanoseconds adaptive = 2 * longest_held + std::chrono::seconds(30);
  return std::clamp<nanoseconds>(adaptive, std::chrono::minutes(2), std::chrono::minutes(10));
}

}  // namespace nvrtc_cache::shim
