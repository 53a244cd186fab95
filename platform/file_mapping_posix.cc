#include "platform/file_mapping.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "platform/errno_guard.h"

namespace nvrtc_cache::platform {

bool mapping_sizes_the_file() { return false; }

int reserve_mapped_space(int fd, long long bytes, bool keep_size) {
  const ErrnoGuard errno_guard;
  // Already reserved (every later open of the same file): as many blocks as asked for are held, and
  // the file is as long as asked for where its size is to be set. Asking again costs a journal
  // transaction per open.
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<long long>(st.st_blocks) * 512 >= bytes &&
      (keep_size || static_cast<long long>(st.st_size) >= bytes)) {
    return 0;
  }
  if (::fallocate(fd, keep_size ? FALLOC_FL_KEEP_SIZE : 0, 0, static_cast<off_t>(bytes)) == 0) return 0;
  return errno == EOPNOTSUPP || errno == ENOSYS ? 0 : errno;
}

}  // namespace nvrtc_cache::platform
