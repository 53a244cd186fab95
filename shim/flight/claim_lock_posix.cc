// Claim files on Linux (shim/flight/claim_lock.h): open-file-description locks (fcntl F_OFD_SETLK) on files
// opened O_NOFOLLOW relative to the claims directory's handle (its path walked as
// store/directory_handle.h walks a cache directory, never following its last component; 0700, or
// 0770 when shared, and owned by this user unless shared), so a directory replaced by a link while a
// process runs is never followed. Descriptors are O_CLOEXEC; the child of a fork closes those it
// inherited (pthread_atfork, lock-free).
#include "shim/flight/claim_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "platform/errno_guard.h"
#include "platform/fork_locks.h"
#include "store/directory_handle.h"

namespace nvrtc_cache::shim::claim_lock {
namespace {

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
    if (const int value = slot.exchange(0); value > 0) ::close(value - 1);
  }
  errno = saved_errno;
}

// A child never keeps its parent's claims alive: it closes the descriptors it inherited (lock-free,
// no allocation). Registered at load, in the one fork order (platform/fork_locks.h).
__attribute__((constructor)) void register_fork_step() {
  platform::join_fork_order(platform::ForkRank::kClaims, {nullptr, nullptr, close_inherited_claims});
}

int fd_of(FileHandle file) { return static_cast<int>(file); }

// The holder's mark: "<pid> <pid namespace>\n", so that a waiter in the same pid namespace can tell
// a stopped holder (SIGSTOP, a debugger) from a busy one.
std::string pid_namespace() {
  char target[64] = {};
  const ssize_t n = ::readlink("/proc/self/ns/pid", target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : std::string("?");
}

}  // namespace

struct Folder::State {
  bool shared = false;
  store::DirectoryHandle handle;
  platform::FileId id;
};

Folder::Folder(const std::string& path, bool shared) : state_(std::make_unique<State>()) {
  const platform::ErrnoGuard errno_guard;
  state_->shared = shared;
  platform::Env& env = *platform::Env::system();
  // The directory holding it must exist; it is walked from the root, then the claims directory is
  // opened (created when missing) as one component that is never a link.
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const std::size_t slash = trimmed.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : trimmed.substr(0, slash);
  const std::string leaf = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  if (leaf.empty() || leaf == "." || leaf == ".." || leaf == "/") {
    problem_ = "not a claims directory: " + path;
    return;
  }
  store::DirectoryWalk holder = store::open_directory_path(parent, /*create=*/false, shared, env);
  if (!holder.handle.valid()) {
    problem_ = holder.detail;
    return;
  }
  store::DirectoryWalk walk = store::open_subdirectory(holder.handle, leaf, path, /*create=*/true, env,
                                                       shared ? store::kGroupSharedDirectoryMode : mode_t{0700});
  if (!walk.handle.valid()) {
    problem_ = walk.detail;
    return;
  }
  struct stat st;
  if (const int rc = env.stat_at(walk.handle.fd(), "", &st); rc != 0) {
    problem_ = "cannot stat " + path + ": " + std::strerror(rc);
  } else if (!S_ISDIR(st.st_mode)) {
    problem_ = path + " is not a directory";
  } else if (!shared && st.st_uid != geteuid()) {
    problem_ = path + " is owned by another user";
  } else if (!shared && (st.st_mode & (S_IWGRP | S_IWOTH))) {
    problem_ = path + " is writable by group or others";
  } else {
    state_->handle = std::move(walk.handle);
    state_->id = platform::file_id(st);
  }
}

Folder::~Folder() = default;

bool Folder::intact() const {
  const platform::ErrnoGuard errno_guard;
  struct stat st;
  return state_->handle.valid() && fstat(state_->handle.fd(), &st) == 0 && S_ISDIR(st.st_mode) &&
         platform::file_id(st) == state_->id;
}

FileHandle Folder::open(const std::string& name, std::string* problem, bool* removing) const {
  const platform::ErrnoGuard errno_guard;
  *removing = false;  // an unlinked name is gone at once: O_CREAT makes a new file
  const int fd = openat(state_->handle.fd(), name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
                        state_->shared ? store::kGroupSharedFileMode : 0600);
  if (fd < 0) {
    *problem = "cannot open " + name + ": " + std::strerror(errno);
    return kNoFile;
  }
  remember(fd);
  if (state_->shared) {  // the group's whatever the umask (a claim file of another member is theirs to set)
    struct stat st {};
    if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 07777) != store::kGroupSharedFileMode) {
      (void)fchmod(fd, store::kGroupSharedFileMode);
    }
  }
  return fd;
}

bool Folder::still_named(FileHandle file, const std::string& name) const {
  const platform::ErrnoGuard errno_guard;
  struct stat opened, named;
  if (fstat(fd_of(file), &opened) != 0 ||
      fstatat(state_->handle.fd(), name.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0) {
    return false;
  }
  return opened.st_nlink > 0 && opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

void Folder::remove(FileHandle file, const std::string& name) const {
  const platform::ErrnoGuard errno_guard;
  if (still_named(file, name)) unlinkat(state_->handle.fd(), name.c_str(), 0);  // never a file that replaced it
}

LockTry try_lock(FileHandle file, std::string* problem) {
  const platform::ErrnoGuard errno_guard;
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 0;  // the whole file
  if (fcntl(fd_of(file), F_OFD_SETLK, &lock) == 0) return LockTry::kLocked;
  if (errno == EAGAIN || errno == EACCES || errno == EINTR) return LockTry::kBusy;
  *problem = std::string("cannot lock it: ") + std::strerror(errno);
  return LockTry::kFailed;
}

void close(FileHandle file) {
  const platform::ErrnoGuard errno_guard;
  forget(fd_of(file));  // before close: the number may be reused by another thread right after
  ::close(fd_of(file));
}

void mark_holder(FileHandle file) {
  const platform::ErrnoGuard errno_guard;
  const std::string mark = std::to_string(::getpid()) + " " + pid_namespace() + "\n";
  if (::ftruncate(fd_of(file), 0) == 0) (void)::pwrite(fd_of(file), mark.data(), mark.size(), 0);
}

// The holder runs in this pid namespace and /proc says its state is T (stopped) or t (stopped by a
// tracer).
bool holder_stopped(FileHandle file) {
  const platform::ErrnoGuard errno_guard;
  char mark[96] = {};
  const ssize_t n = ::pread(fd_of(file), mark, sizeof mark - 1, 0);
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

}  // namespace nvrtc_cache::shim::claim_lock
