#include "platform/file_mapping.h"

#include <fcntl.h>

#include <cerrno>

#include "platform/errno_guard.h"

namespace nvrtc_cache::platform {

bool mapping_sizes_the_file() { return false; }

int reserve_mapped_space(int fd, long long bytes, bool keep_size) {
  const ErrnoGuard errno_guard;
  if (::fallocate(fd, keep_size ? FALLOC_FL_KEEP_SIZE : 0, 0, static_cast<off_t>(bytes)) == 0) return 0;
  return errno == EOPNOTSUPP || errno == ENOSYS ? 0 : errno;
}

}  // namespace nvrtc_cache::platform
