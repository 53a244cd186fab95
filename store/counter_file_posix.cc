// The counters file's mapping on POSIX (store/counter_file_mapping.h).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "platform/errno_guard.h"
#include "platform/file_mapping.h"
#include "store/counter_file.h"
#include "store/counter_file_mapping.h"

namespace nvrtc_cache::store {
namespace {

// No fallocate on this filesystem (some network and FUSE ones): a fault is left to the watch of the
// mapping (platform::watch_mapping).
bool reserve_space(int fd) {
  return platform::reserve_mapped_space(fd, static_cast<long long>(CounterFile::kFileSize), /*keep_size=*/false) == 0;
}

}  // namespace

void* map_counter_file(const std::string& path, bool create, bool shared, bool* reserved, std::string* problem) {
  const platform::ErrnoGuard errno_guard;
  constexpr std::size_t kFileSize = CounterFile::kFileSize;
  int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  if (create) flags |= O_CREAT;
  int fd = ::open(path.c_str(), flags, shared ? 0660 : 0600);
  // A cache this user cannot write (a read-only mount, another user's files): its counts are read.
  bool writable = fd >= 0;
  if (fd < 0 && (errno == EROFS || errno == EACCES || errno == EPERM))
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    *problem = path + ": " + std::strerror(errno);
    return nullptr;
  }
  // The directory was checked as the cache's (its owner, or a group sharing it on purpose); the file
  // must be a regular file, the user's own unless the cache is shared or the reader is root.
  struct stat st {};
  bool usable =
      ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == ::geteuid() || shared || ::geteuid() == 0);
  if (!usable) {
    *problem = path + " is not a regular file of this user's";
  } else if (!writable) {
    usable = st.st_size == static_cast<off_t>(kFileSize);
    if (!usable) *problem = path + " is read-only and not a counters file";
  } else if (st.st_size == 0) {
    usable = ::ftruncate(fd, static_cast<off_t>(kFileSize)) == 0;  // idempotent if two processes race
    if (!usable)
      *problem = path + ": " + std::strerror(errno);
    else if (shared)
      (void)::fchmod(fd, 0660);
  } else if (st.st_size != static_cast<off_t>(kFileSize)) {
    usable = false;
    *problem = path + " has a size no counters file has";
  }
  // ftruncate leaves a hole: the first write to each of its pages would need a block, and on a full
  // filesystem that write faults (SIGBUS). Real space for every page, or the file is only read.
  *reserved = writable && (!usable || reserve_space(fd));
  void* mapping = MAP_FAILED;
  if (usable) mapping = ::mmap(nullptr, kFileSize, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mapping == MAP_FAILED) {
    if (usable) *problem = path + ": " + std::strerror(errno);
    return nullptr;
  }
  return mapping;
}

void unmap_counter_file(void* mapping) {
  const platform::ErrnoGuard errno_guard;
  ::munmap(mapping, CounterFile::kFileSize);
}

}  // namespace nvrtc_cache::store
