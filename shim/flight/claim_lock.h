// The system's half of claim files (shim/flight/claim_file.h has the protocol, the same on every system):
// the claims directory opened and checked, a claim file opened (created) in it, an exclusive lock
// on it that the system drops when its holder dies, whether the file is still the one at its name,
// and its removal. A build compiles one half: claim_lock_posix.cc (Linux: an open-file-description
// lock, fcntl F_OFD_SETLK, on a file opened relative to the directory's handle) or
// claim_lock_windows.cc (LockFileEx on a handle; files opened with FILE_SHARE_DELETE so that a
// holder can remove its file while others have it open).
// Contract: thread-safe; never throws except std::bad_alloc; preserves errno (and, on Windows, the
// thread's last-error value). A lock belongs to the handle that took it: two handles on one file
// conflict even in one thread, and closing the handle (or the process ending, however it ends)
// drops it. Fork (POSIX): the child closes every claim file it inherited (platform/fork_locks.h), so
// a parent's claim is never kept alive by its child. Windows handles are not inherited.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace nvrtc_cache::shim::claim_lock {

// An open claim file: a descriptor (POSIX) or a HANDLE (Windows); kNoFile when none.
using FileHandle = std::intptr_t;
inline constexpr FileHandle kNoFile = -1;

enum class LockTry {
  kLocked,  // this handle now holds the lock
  kBusy,    // another handle holds it
  kFailed,  // the lock cannot be taken here (the problem says why)
};

// The claims directory, opened (created when missing) and checked once.
class Folder {
 public:
  // `shared`: a cache shared by a group on purpose (POSIX modes; no difference on Windows).
  Folder(const std::string& path, bool shared);
  ~Folder();
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;

  // Why the directory cannot be used (empty when it can).
  const std::string& problem() const { return problem_; }
  // Whether the directory is still the one it was opened on (POSIX: a program may close descriptors).
  bool intact() const;
  // Opens (creating) the claim file `name` (one path component). kNoFile on failure, with `problem`
  // set; `removing` says the file is being removed by a holder that released it (Windows: a file
  // whose deletion is pending cannot be opened), which is no failure of claims.
  FileHandle open(const std::string& name, std::string* problem, bool* removing) const;
  // Whether `file` is the file at `name` now (not removed or replaced since it was opened).
  bool still_named(FileHandle file, const std::string& name) const;
  // Removes the file `name` if it is still `file`: waiters that then lock `file` know its holder
  // finished.
  void remove(FileHandle file, const std::string& name) const;

 private:
  struct State;
  std::string problem_;
  std::unique_ptr<State> state_;
};

// Tries the exclusive lock on the whole file, without waiting.
LockTry try_lock(FileHandle file, std::string* problem);
// Closes a claim file (dropping its lock).
void close(FileHandle file);
// Writes the holder's mark into the file it locked (POSIX: its pid, for holder_stopped()).
void mark_holder(FileHandle file);
// Whether the holder that marked `file` is known to be stopped (SIGSTOP, a debugger). Unknown, or
// Windows: false.
bool holder_stopped(FileHandle file);

}  // namespace nvrtc_cache::shim::claim_lock
