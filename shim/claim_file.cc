#include "shim/claim_file.h"

#include "platform/errno_guard.h"
#include "platform/fork_locks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <utility>

namespace nvrtc_cache::shim {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// Every claim descriptor open in this process (value fd + 1; 0 is a free slot), so that the child
// of a fork can close the ones it inherited. Lock-free: the child handler runs in a process whose
// other threads are gone. A descriptor that finds no free slot is simply not closed in a child
// (it is still closed at exec).
std::array<std::atomic<int>, 64> g_open_claim_fds{};

void remember(int fd) {
  for (auto& slot : g_open_claim_fds) {
    int free_slot = 0;
    if (slot.compare_exchange_strong(free_slot, fd + 1)) return;
  }
}

void forget(int fd) {
  for (auto& slot : g_open_claim_fds) {
    int mine = fd + 1;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

void close_inherited_claims() {
  const int saved_errno = errno;
  for (auto& slot : g_open_claim_fds) {
    if (const int value = slot.exchange(0); value > 0) close(value - 1);
  }
  errno = saved_errno;
}

// A child never keeps its parent's claims alive: it closes the descriptors it inherited (lock-free,
// no allocation). Registered at load, in the one fork order (platform/fork_locks.h).
__attribute__((constructor)) void register_fork_step() {
  platform::join_fork_order(platform::ForkRank::kClaims, {nullptr, nullptr, close_inherited_claims});
}

void close_claim_fd(int fd) {
  forget(fd);  // before close: the number may be reused by another thread right after
  close(fd);
}

std::atomic<std::int64_t> g_longest_held_ns{0};

void note_held(nanoseconds held) {
  std::int64_t longest = g_longest_held_ns.load(std::memory_order_relaxed);
  while (held.count() > longest && !g_longest_held_ns.compare_exchange_weak(longest, held.count())) {
  }
}

// An open claim file that is not (yet) a held claim; closed on destruction.
class ClaimFd {
 public:
  explicit ClaimFd(int fd) : fd_(fd) {
    if (fd_ >= 0) remember(fd_);
  }
  ~ClaimFd() { reset(); }
  ClaimFd(const ClaimFd&) = delete;
  ClaimFd& operator=(const ClaimFd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) close_claim_fd(std::exchange(fd_, -1));
  }

 private:
  int fd_;
};

// 0, or errno: EAGAIN/EACCES when another description holds the lock.
int try_lock(int fd) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 0;  // the whole file
  return fcntl(fd, F_OFD_SETLK, &lock) == 0 ? 0 : errno;
}

// The holder's mark in its claim file: "<pid> <pid namespace>\n", so that a waiter in the same pid
// namespace can tell a stopped holder (SIGSTOP, a debugger) from a busy one.
std::string pid_namespace() {
  char target[64] = {};
  const ssize_t n = ::readlink("/proc/self/ns/pid", target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : std::string("?");
}

void mark_holder(int fd) {
  const std::string mark = std::to_string(::getpid()) + " " + pid_namespace() + "\n";
  if (::ftruncate(fd, 0) == 0) (void)::pwrite(fd, mark.data(), mark.size(), 0);
}

// Whether the holder that marked the claim file `fd` is stopped: it runs in this pid namespace and
// /proc says its state is T (stopped) or t (stopped by a tracer). Unknown means not stopped.
bool holder_stopped(int fd) {
  char mark[96] = {};
  const ssize_t n = ::pread(fd, mark, sizeof mark - 1, 0);
  if (n <= 0) return false;
  const std::string text(mark, static_cast<std::size_t>(n));
  const std::size_t space = text.find(' ');
  const std::size_t end = text.find('\n');
  if (space == std::string::npos || end == std::string::npos || end < space) return false;
  if (text.substr(space + 1, end - space - 1) != pid_namespace()) return false;
  const std::string pid = text.substr(0, space);
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) return false;
  char stat[512] = {};
  const int stat_fd = ::open(("/proc/" + pid + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (stat_fd < 0) return false;
  const ssize_t got = ::read(stat_fd, stat, sizeof stat - 1);
  ::close(stat_fd);
  if (got <= 0) return false;
  const char* paren = std::strrchr(stat, ')');  // the state follows the command name's closing paren
  return paren != nullptr && paren[1] == ' ' && (paren[2] == 'T' || paren[2] == 't');
}

// Whether `fd` is the file `name` in `directory` (not unlinked or replaced since it was opened).
bool still_in(int fd, int directory, const std::string& name) {
  struct stat opened, named;
  if (fstat(fd, &opened) != 0 || fstatat(directory, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0) return false;
  return opened.st_nlink > 0 && opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

void sleep_for(nanoseconds duration) {
  timespec ts{static_cast<time_t>(duration.count() / 1'000'000'000),
              static_cast<long>(duration.count() % 1'000'000'000)};
  nanosleep(&ts, nullptr);  // an interrupted sleep only polls sooner
}

bool valid_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

}  // namespace

Claim::Claim(int fd, int directory, std::string name)
    : fd_(fd), directory_(directory), name_(std::move(name)), acquired_(Clock::now()) {}

Claim::Claim(Claim&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      directory_(other.directory_),
      name_(std::move(other.name_)),
      acquired_(other.acquired_) {}

Claim& Claim::operator=(Claim&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    directory_ = other.directory_;
    name_ = std::move(other.name_);
    acquired_ = other.acquired_;
  }
  return *this;
}

void Claim::release() {
  if (fd_ < 0) return;
  const platform::ErrnoGuard errno_guard;
  // Unlink first: whoever then gets the lock on this file sees it is no longer at the path and
  // knows the holder finished. Only our own file: never one that replaced it.
  if (still_in(fd_, directory_, name_)) unlinkat(directory_, name_.c_str(), 0);
  note_held(std::chrono::duration_cast<nanoseconds>(Clock::now() - acquired_));
  close_claim_fd(std::exchange(fd_, -1));
}

ClaimDirectory::ClaimDirectory(std::string path, bool shared) : path_(std::move(path)), shared_(shared) {
  const platform::ErrnoGuard errno_guard;
  store::Env& env = *store::Env::system();
  // The directory holding it must exist; it is walked from the root, then the claims directory is
  // opened (created when missing) as one component that is never a link.
  std::string trimmed = path_;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const std::size_t slash = trimmed.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : trimmed.substr(0, slash);
  const std::string leaf = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  if (leaf.empty() || leaf == "." || leaf == ".." || leaf == "/") {
    problem_ = "not a claims directory: " + path_;
    return;
  }
  store::DirectoryWalk holder = store::open_directory_path(parent, /*create=*/false, shared_, env);
  if (!holder.handle.valid()) {
    problem_ = holder.detail;
    return;
  }
  store::DirectoryWalk walk = store::open_subdirectory(holder.handle, leaf, path_, /*create=*/true, env,
                                                       shared_ ? store::kGroupSharedDirectoryMode : mode_t{0700});
  if (!walk.handle.valid()) {
    problem_ = walk.detail;
    return;
  }
  struct stat st;
  if (const int rc = env.stat_at(walk.handle.fd(), "", &st); rc != 0) {
    problem_ = "cannot stat " + path_ + ": " + std::strerror(rc);
  } else if (!S_ISDIR(st.st_mode)) {
    problem_ = path_ + " is not a directory";
  } else if (!shared_ && st.st_uid != geteuid()) {
    problem_ = path_ + " is owned by another user";
  } else if (!shared_ && (st.st_mode & (S_IWGRP | S_IWOTH))) {
    problem_ = path_ + " is writable by group or others";
  } else {
    handle_ = std::move(walk.handle);
    id_ = platform::file_id(st);
  }
}

bool ClaimDirectory::handle_intact() const {
  struct stat st;
  return fstat(handle_.fd(), &st) == 0 && S_ISDIR(st.st_mode) && platform::file_id(st) == id_;
}

namespace {

// How long a holder may stay stopped before its waiters stop waiting for it (a debugger's breakpoint
// is often brief; a suspended job is not).
constexpr std::chrono::seconds kStoppedHolderGrace{10};

// After a refused lock: the outcome that ends the wait, or nullopt to sleep and poll again (`waited`
// is then the time waited so far; `stopped_since` when the holder was first seen stopped). The path
// first: a holder stores before it unlinks, so a result stored by a holder seen gone is found by the
// look-up after it.

std::optional<ClaimOutcome> wait_ended(int fd, int directory, const std::string& name,
                                       const std::function<bool()>& result_ready, Clock::time_point first_refused,
                                       nanoseconds timeout, nanoseconds& waited, Clock::time_point& stopped_since) {
  const bool holder_gone = !still_in(fd, directory, name);
  if (result_ready()) return ClaimOutcome::kReady;
  if (holder_gone) return ClaimOutcome::kHolderFinished;
  waited = std::chrono::duration_cast<nanoseconds>(Clock::now() - first_refused);
  if (waited >= timeout) return ClaimOutcome::kTimedOut;
  if (!holder_stopped(fd)) {
    stopped_since = Clock::time_point::min();
  } else if (stopped_since == Clock::time_point::min()) {
    stopped_since = Clock::now();
  } else if (Clock::now() - stopped_since >= kStoppedHolderGrace) {
    return ClaimOutcome::kHolderStopped;
  }
  return std::nullopt;
}

}  // namespace

void ClaimDirectory::settle_locked(int fd, const std::string& name, const std::function<bool()>& result_ready,
                                   ClaimAttempt& out) const {
  if (!still_in(fd, handle_.fd(), name)) {
    close_claim_fd(fd);  // its holder unlinked it: that holder is done
    out.outcome = result_ready() ? ClaimOutcome::kReady : ClaimOutcome::kHolderFinished;
    return;
  }
  // Ours (free, or its holder died). A holder may have stored and released just before we opened
  // the file: look once more before compiling.
  Claim claim(fd, handle_.fd(), name);
  mark_holder(fd);
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
    out.problem = problem_;
    return out;
  }
  if (!valid_name(name)) {
    out.problem = "not a claim name: " + std::string(name);
    return out;
  }
  if (!handle_intact()) {
    out.problem = path_ + ": the directory's descriptor was closed by the program";
    return out;
  }
  const std::string file(name);
  ClaimFd fd(openat(handle_.fd(), file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
                    shared_ ? store::kGroupSharedFileMode : 0600));
  if (fd.get() < 0) {
    out.problem = "cannot open " + path_ + "/" + file + ": " + std::strerror(errno);
    return out;
  }
  if (shared_) {  // the group's whatever the umask (a claim file of another member is theirs to set)
    struct stat st {};
    if (fstat(fd.get(), &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 07777) != store::kGroupSharedFileMode) {
      (void)fchmod(fd.get(), store::kGroupSharedFileMode);
    }
  }
  Clock::time_point first_refused;
  Clock::time_point stopped_since = Clock::time_point::min();  // since when the holder is seen stopped
  nanoseconds pause = milliseconds(1);
  while (true) {
    const int lock_error = try_lock(fd.get());
    if (lock_error == 0) {
      settle_locked(fd.release(), file, result_ready, out);
      break;
    }
    if (lock_error != EAGAIN && lock_error != EACCES && lock_error != EINTR) {
      out.problem = "cannot lock " + path_ + "/" + file + ": " + std::strerror(lock_error);
      break;
    }
    if (!out.waited) {
      out.waited = true;
      first_refused = Clock::now();
      if (on_wait) on_wait();
    }
    nanoseconds waited{0};
    const std::optional<ClaimOutcome> ended =
        wait_ended(fd.get(), handle_.fd(), file, result_ready, first_refused, timeout, waited, stopped_since);
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
