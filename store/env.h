// Env: the seam to the filesystem, the environment and the clock (leveldb's Env), for the store and
// for direct mode's dependency checks (direct/dependencies.cc). Production code uses
// Env::system(); tests substitute an Env that fails chosen operations (ENOSPC, EIO, EACCES, short
// reads) or moves the clock, so failure handling is tested deterministically.
// Contract: implementations are thread-safe; each call returns 0 or an errno value and never throws;
// Env::system() lives for the whole process. LMDB's own I/O does not go through this seam; faults
// in it are injected with fault_for(). Filesystem access is by handle (`dir` is a directory
// descriptor, O_PATH is enough; `name` is one path component, never followed if it is a symbolic
// link), as the cache directory walk needs (store/directory_handle.h); the defaults are the system
// calls, so a test Env overrides only those it fails. A descriptor returned by open_directory_at
// is O_CLOEXEC and belongs to the caller. On Windows (store/windows/env.cc) paths are UTF-8, a
// "descriptor" is an entry of that file's table of directory handles (FILE_FLAG_BACKUP_SEMANTICS,
// never following a reparse point, which it reports as a symbolic link), struct stat carries the
// volume serial number and the 64-bit file index (file_id() below) and statfs_at fails with ENOSYS.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#ifdef _WIN32
struct statfs;  // no such call on Windows: store/windows/env.cc fails statfs_at with ENOSYS
#ifndef S_IFLNK  // a reparse point, as the Windows Env reports it
#define S_IFLNK 0xA000
#define S_ISLNK(m) (((m) & S_IFMT) == S_IFLNK)
#endif
#ifndef AT_FDCWD
#define AT_FDCWD (-100)
#endif
#else
#include <sys/statfs.h>
#endif

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvrtc_cache::store {

// Store operations whose LMDB outcome a test Env can replace with a fault.
enum class StoreOperation { kOpen, kGet, kPut, kErase, kEvict };

// A file's identity: st_dev and st_ino. On Windows struct stat's st_ino has 16 bits, so the Windows
// Env spreads the 64-bit file index over st_ino, st_uid, st_gid and st_rdev; file_id() reassembles it.
struct FileId {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  auto operator<=>(const FileId&) const = default;
};
inline FileId file_id(const struct stat& st) {
#ifdef _WIN32
  return {static_cast<std::uint32_t>(st.st_dev),
          static_cast<std::uint64_t>(st.st_ino) | static_cast<std::uint64_t>(static_cast<std::uint16_t>(st.st_uid)) << 16 |
              static_cast<std::uint64_t>(static_cast<std::uint16_t>(st.st_gid)) << 32 |
              static_cast<std::uint64_t>(static_cast<std::uint16_t>(st.st_rdev)) << 48};
#else
  return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
#endif
}

// fstat() of an open file (LMDB's data file; on Windows the HANDLE's value); 0 or an errno value.
int stat_open_file(std::intptr_t file, struct stat* out);
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
  // CLOCK_REALTIME in nanoseconds, the clock file timestamps are compared with.
  virtual std::int64_t now_realtime_ns();

  // 0 to let LMDB perform `operation`, or the LMDB/errno code to report instead.
  virtual int fault_for(StoreOperation) { return 0; }

  static Env* system();
};

}  // namespace nvrtc_cache::store
