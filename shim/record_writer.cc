#include "shim/record_writer.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/compile_record.h"
#include "core/log.h"
#include "platform/errno_guard.h"
#include "platform/own_file.h"

namespace nvrtc_cache::shim {
namespace {

// The path the real NVRTC was loaded from.
std::string library_path_of(const interpose::RealNvrtc& real) {
  if (real.link_map != nullptr) {
    const char* name = static_cast<const link_map*>(real.link_map)->l_name;
    if (name != nullptr && name[0] == '/') return name;
  }
  Dl_info info;
  if (real.nvrtcVersion != nullptr && dladdr(reinterpret_cast<const void*>(real.nvrtcVersion), &info) != 0 &&
      info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return {};
}

// Writes all of `frame` at the end of the locked file; on failure cuts the file back to where the
// frame began. Returns 0 or an errno value.
int write_frame(int fd, const std::string& frame) {
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  std::size_t written = 0;
  while (written < frame.size()) {
    const ssize_t n = ::write(fd, frame.data() + written, frame.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      if (written > 0) (void)ftruncate(fd, st.st_size);
      return error;
    }
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

// Appends `frame` to the record file (a regular file of this user's own, or created 0600); returns ""
// or why it could not.
std::string append_locked(const std::string& file, const std::string& frame) {
  std::string why;
  const int fd = platform::open_own_file_for_append(file, &why);
  if (fd < 0) return why;
  int error = 0;
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      error = errno;
      break;
    }
  }
  if (error == 0) error = write_frame(fd, frame);
  ::close(fd);  // releases the lock
  return error == 0 ? std::string() : std::strerror(error);
}

}  // namespace

void append_compile_record(const std::string& file, const interpose::RealNvrtc& real, const ProgramRecord& record,
                           const direct::DependencySet& dependencies) noexcept {
  platform::ErrnoGuard errno_guard;
  try {
    const std::string why =
        append_locked(file, core::encode_record(library_path_of(real), record.inputs, dependencies));
    if (!why.empty()) {
      core::log_once(core::LogLevel::kWarn, "record-write",
                     "cannot append to the record file " + file + " (" + why + "); compiles are not recorded");
    }
  } catch (...) {
    core::log_once(core::LogLevel::kWarn, "record-exception", "internal error while recording a compile; not recorded");
  }
}

}  // namespace nvrtc_cache::shim
