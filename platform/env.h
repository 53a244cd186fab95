// Env: the seam to the filesystem, the environment and the clock (leveldb's Env), for the store, for
// direct mode's dependency checks (direct/dependencies.cc) and for reading configuration. Production
// code uses Env::system(); tests substitute an Env that fails chosen operations (ENOSPC, EIO, EACCES,
// short reads) or moves the clock, so failure handling is tested deterministically. LMDB's I/O does
// not go through the Env: a test Env replaces the outcome of a whole store operation instead
// (fault_for, asked once per operation before LMDB is called).
// Contract: implementations are thread-safe; each call returns 0 or an errno value and never throws;
// Env::system() lives for the whole process (created lock-free, so a child forked while it is being
// created makes its own). Filesystem access is by handle (`dir` is a directory descriptor, O_PATH is
// enough; `name` is one path component, never followed if it is a symbolic link), as the cache
// directory walk needs (store/directory_handle.h); the defaults are the system calls, so a test Env
// overrides only those it fails. A descriptor returned by open_directory_at is O_CLOEXEC and belongs
// to the caller.
// Implementations: env_posix.cc (the system calls) and env_windows.cc, chosen by the build. On
// Windows paths are UTF-8, a "descriptor" is an entry of that file's table of directory handles
// (FILE_FLAG_BACKUP_SEMANTICS, never following a reparse point, which it reports as a symbolic link),
// struct stat carries the volume serial number and the 64-bit file index (file_id() below), times
// have whole seconds, no owner is reported (owner_of() below) and statfs_at fails with ENOSYS.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// What the Env reports where the C library has no name for it (Windows' CRT): a reparse point is a
// symbolic link, and AT_FDCWD names the working directory.
#ifndef S_IFLNK
#define S_IFLNK 0xA000
#endif
#ifndef S_ISLNK
#define S_ISLNK(m) (((m)&S_IFMT) == S_IFLNK)
#endif
#ifndef AT_FDCWD
#define AT_FDCWD (-100)
#endif

struct statfs;  // <sys/statfs.h> where there is such a call

namespace nvrtc_cache::platform {

// The cache store's operations (store/lmdb/) whose outcome a test Env can replace with a fault.
enum class StoreOperation { kOpen, kGet, kPut, kErase, kEvict };

// A file's identity: st_dev and st_ino. On Windows struct stat's st_ino has 16 bits, so the Windows
// Env spreads the 64-bit file index over st_ino, st_uid, st_gid and st_rdev; file_id() reassembles it.
struct FileId {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  auto operator<=>(const FileId&) const = default;
};
FileId file_id(const struct stat& st);

// st_mtim and st_ctim in nanoseconds since the Unix epoch (Windows: whole seconds).
std::int64_t modified_time_ns(const struct stat& st);
std::int64_t changed_time_ns(const struct stat& st);

// Who owns a file, by the struct stat an Env filled: st_uid against this process's effective user
// (kRoot: uid 0 when this process is not root). kUnknown where the Env reports no owner (Windows: a
// directory's ACL says who may use it, and st_uid carries file-index bits), so neither owners nor
// POSIX mode bits can be checked.
enum class Owner { kThisUser, kRoot, kAnotherUser, kUnknown };
Owner owner_of(const struct stat& st);

// fstat() of an open file (LMDB's data file; on Windows the HANDLE's value); 0 or an errno value.
int stat_open_file(std::intptr_t file, struct stat* out);
// The same for a file expected to be the entry `name` of the directory `dir` (a descriptor of
// Env::open_directory_at). POSIX: fstat(). Windows: where the file's present full path is the
// directory's joined with `name`, its volume is the directory's (no query of the volume: a round
// trip to the mount manager under Wine); otherwise it is asked, as stat_open_file() does.
int stat_open_file_in(std::intptr_t file, int dir, const std::string& name, struct stat* out);

// A path naming the directory the descriptor `dir` holds, for a library that opens by path (LMDB),
// or "" where there is none. POSIX: "/proc/self/fd/N", which names that very directory while the
// descriptor is open (where /proc is mounted: the caller checks that it resolves to it). Windows: the
// directory's present full path (GetFinalPathNameByHandleW, without its "\\?\" prefix), read from
// the handle, which names it until the directory is moved: asking again and getting the same path
// says it still does.
std::string path_naming_directory(int dir);
// Whether that path is read from the handle itself (Windows: it named the directory when it was read),
// rather than one the caller must check resolves to it (POSIX: /proc may be missing).
bool path_naming_directory_is_read_from_it();

// Whether Env::open_directory_at(AT_FDCWD, path) of a whole absolute path without ".." components
// opens what the component walk of store/directory_handle.h would: Windows, where no owner is
// reported (owner_of() below), so the walk follows every link above the last component, as the system
// does, and the last component is opened itself, never followed. POSIX: false (a link is followed only
// when its owner is trusted).
bool whole_path_open_is_the_walk();
// Closes, or duplicates (-1 on failure), a descriptor returned by Env::open_directory_at.
void close_directory_descriptor(int fd);
int duplicate_directory_descriptor(int fd);

class Env {
 public:
  virtual ~Env() = default;

  // Wall-clock seconds (access times for eviction are this coarse on purpose).
  virtual std::int64_t now_seconds() = 0;

  // stat() of a path (following links).
  virtual int stat(const std::string& path, struct stat* out);

  // openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW): ELOOP or ENOTDIR when `name` is a
  // symbolic link or not a directory. `dir` may be AT_FDCWD (then `name` may be "/" or ".").
  virtual int open_directory_at(int dir, const std::string& name, int* fd);
  // mkdirat(dir, name, mode); a mode granting more than the owner's bits is then applied exactly
  // (fchmodat), whatever the umask.
  virtual int make_directory_at(int dir, const std::string& name, mode_t mode);
  // fchmodat(dir, name, mode) (Windows: nothing to do, 0).
  virtual int change_mode_at(int dir, const std::string& name, mode_t mode);
  // Opens (creating it with `mode`) the regular file `name` in `dir`, never following a link, and
  // has the filesystem hold real space for its first `bytes` bytes without changing its size
  // (fallocate FALLOC_FL_KEEP_SIZE), so that a mapping of them can never fault for want of a block;
  // ENOSPC or EDQUOT when the space cannot be had, 0 where the filesystem cannot reserve (no
  // fallocate: nothing reserved, nothing refused). Closing the file drops the process's fcntl locks
  // on it: never for a file this process may hold them on (LMDB's lock.mdb is reserved before LMDB
  // opens it). Windows: 0 (an extended file is not sparse).
  virtual int reserve_file_at(int dir, const std::string& name, mode_t mode, off_t bytes);
  // fstatat(dir, name, AT_SYMLINK_NOFOLLOW); an empty `name` stats `dir` itself.
  virtual int stat_at(int dir, const std::string& name, struct stat* out);
  virtual int statfs_at(int dir, struct statfs* out);
  virtual int read_link_at(int dir, const std::string& name, std::string* target);
  virtual int rename_at(int dir, const std::string& from, const std::string& to);
  // unlinkat; `directory` removes an (empty) directory.
  virtual int remove_at(int dir, const std::string& name, bool directory);
  // The names in `dir`, "." and ".." left out, in no particular order.
  virtual int list_directory(int dir, std::vector<std::string>* names);
  // Reads up to `size` bytes at `offset` of the file `name` in `dir` (opened O_NOFOLLOW, then closed:
  // never lock.mdb, whose fcntl locks closing would drop); `*read` gets the count (short at end).
  virtual int read_file_at(int dir, const std::string& name, void* buffer, std::size_t size, off_t offset,
                           std::size_t* read);

  // Reads by path, for direct mode: the whole regular file at `path` (O_RDONLY | O_NONBLOCK,
  // following links; EINVAL for anything else, which is never waited on; EFBIG once it passes
  // `max_bytes`), realpath(3) and readlink(2) of `path`, and an environment variable (nullopt when it
  // is not set).
  virtual int read_file(const std::string& path, std::size_t max_bytes, std::string* content);
  virtual int real_path(const std::string& path, std::string* resolved);
  virtual int read_link(const std::string& path, std::string* target);
  virtual std::optional<std::string> environment_variable(const std::string& name);
  // The process's working directory (getcwd; Windows: GetCurrentDirectoryW, in UTF-8), or nullopt when
  // it cannot be had (it was removed, a component cannot be read); errno is preserved.
  virtual std::optional<std::string> current_directory();
  // The names of the process's environment variables, in its order (Windows: the environment block's,
  // not the C runtime's copy; its hidden per-drive "=C:" entries left out).
  virtual std::vector<std::string> environment_variable_names();
  // CLOCK_REALTIME in nanoseconds, the clock file timestamps are compared with.
  virtual std::int64_t now_realtime_ns();
  // 0 to let LMDB perform the store's `operation`, or the LMDB/errno code to report instead (the
  // system's Env: always 0).
  virtual int fault_for(StoreOperation operation) {
    (void)operation;
    return 0;
  }

  static Env* system();
};

// The network filesystem the directory `dir` is on, by env.statfs_at ("NFS", "SMB", "Lustre", ...:
// those LMDB cannot safely share a lock file or a map on), or nullptr when it is on none, or when
// that cannot be told (Windows: never asked).
const char* network_filesystem_at(Env& env, int dir);

// The bytes this user may still write on the filesystem holding the directory `dir`, by
// env.statfs_at (f_bavail blocks), or nullopt when that cannot be told (Windows: never asked).
std::optional<std::uint64_t> free_bytes_at(Env& env, int dir);
// Less free space than this is a full disk: a result cannot be stored (LMDB's commit needs pages).
inline constexpr std::uint64_t kFullDiskBytes = std::uint64_t{1} << 20;

}  // namespace nvrtc_cache::platform
