// Compaction (tools/cache/compact.h) where LMDB locks with fcntl: lock.mdb's first byte taken exclusively.
#include "tools/cache/compact.h"

#include <fcntl.h>
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "store/lmdb/library.h"

namespace nvrtc_cache::tools {
namespace {

constexpr unsigned kMaxReaders = 1024;  // as the store opens it (store/lmdb/environment_registry.cc)
constexpr unsigned kMaxDbs = 8;

// The lock LMDB takes on lock.mdb's first byte: shared by every process with the environment open.
int lock_first_byte(int fd, short type, int command = F_SETLK) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 1;
  int rc;
  while ((rc = ::fcntl(fd, command, &lock)) != 0 && errno == EINTR) {
  }
  return rc == 0 ? 0 : errno;
}

// A process holding lock.mdb's first byte (one of them), or 0.
pid_t holder_of(int fd) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 1;
  if (::fcntl(fd, F_GETLK, &lock) != 0 || lock.l_type == F_UNLCK) return 0;
  return lock.l_pid;
}

std::string in_use(const std::string& data, pid_t holder) {
  return fmt::format(
      "{} is in use by another process{}; compaction needs the cache to itself and was not done "
      "(the file's free pages are still reused by later entries). Run it again when the programs "
      "using the cache have finished",
      data, holder > 0 ? fmt::format(" (process {} has it open)", holder) : "");
}

struct EnvCloser {
  void operator()(MDB_env* env) const { store::lmdb::api().mdb_env_close(env); }
};

}  // namespace

Compaction compact_store(const std::string& directory) {
  Compaction result;
  const std::string data = directory + "/data.mdb", lock_path = directory + "/lock.mdb";
  struct stat before {};
  if (::stat(data.c_str(), &before) != 0) return result;  // no store yet: nothing to compact
  result.bytes_before = result.bytes_after = static_cast<std::uint64_t>(before.st_size);
  std::string error;
  if (store::lmdb::lmdb_library(&error) == nullptr) {
    result.problem = "LMDB cannot be loaded: " + error;
    return result;
  }
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (lock_fd < 0) {
    result.problem = fmt::format("cannot open {}: {}", lock_path, std::strerror(errno));
    return result;
  }
  // Every fcntl lock of this process on lock.mdb ends when the environment below is closed (it
  // closes its own descriptor on the file); lock_fd is closed after it.
  std::unique_ptr<int, void (*)(int*)> lock_owner(new int(lock_fd), [](int* fd) {
    ::close(*fd);
    delete fd;
  });
  if (lock_first_byte(lock_fd, F_WRLCK) != 0) {
    result.problem = in_use(data, holder_of(lock_fd));
    return result;
  }
  const auto& api = store::lmdb::api();
  MDB_env* raw = nullptr;
  if (const int rc = api.mdb_env_create(&raw); rc != MDB_SUCCESS) {
    result.problem = fmt::format("cannot compact {}: {}", data, api.mdb_strerror(rc));
    return result;
  }
  std::unique_ptr<MDB_env, EnvCloser> env(raw);
  store::lmdb::install_assert_guard(raw);
  int rc = api.mdb_env_set_maxreaders(raw, kMaxReaders);
  if (rc == MDB_SUCCESS) rc = api.mdb_env_set_maxdbs(raw, kMaxDbs);
  if (rc == MDB_SUCCESS) rc = api.mdb_env_open(raw, directory.c_str(), MDB_NOTLS, before.st_mode & 0777);
  if (rc != MDB_SUCCESS) {
    result.problem = fmt::format("cannot open {} to compact it: {}", data, api.mdb_strerror(rc));
    return result;
  }
  // LMDB's open shared the lock again: take it back, or give up if a process opened the cache meanwhile.
  if (lock_first_byte(lock_fd, F_WRLCK) != 0) {
    result.problem = in_use(data, holder_of(lock_fd));
    return result;
  }
  std::string temporary = directory + "/data.mdb.compact-XXXXXX";
  const int out = ::mkstemp(temporary.data());
  if (out < 0) {
    result.problem = fmt::format("cannot create a file beside {}: {}", data, std::strerror(errno));
    return result;
  }
  bool ok = ::fchmod(out, before.st_mode & 0777) == 0;
  if (ok && ::fchown(out, static_cast<uid_t>(-1), before.st_gid) != 0 && errno != EPERM) ok = false;
  rc = ok ? api.mdb_env_copyfd2(raw, out, MDB_CP_COMPACT) : errno;
  ok = ok && rc == MDB_SUCCESS && ::fsync(out) == 0;
  struct stat after {};
  ok = ok && ::fstat(out, &after) == 0;
  const int copy_error = errno;
  ::close(out);
  if (!ok) {
    result.problem = fmt::format("cannot write the compacted copy of {}: {}", data,
                                 rc != MDB_SUCCESS ? api.mdb_strerror(rc) : std::strerror(copy_error));
    ::unlink(temporary.c_str());
    return result;
  }
  if (::rename(temporary.c_str(), data.c_str()) != 0) {
    result.problem = fmt::format("cannot replace {}: {}", data, std::strerror(errno));
    ::unlink(temporary.c_str());
    return result;
  }
  if (const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
  result.done = true;
  result.bytes_after = static_cast<std::uint64_t>(after.st_size);
  return result;  // the environment (the old file's mapping) closes, then the lock is released
}

}  // namespace nvrtc_cache::tools
