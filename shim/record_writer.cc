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

// The path a real library was loaded from: its link map's name, or the object holding `code`.
std::string library_path_of(const void* map, const void* code) {
  if (map != nullptr) {
    const char* name = static_cast<const link_map*>(map)->l_name;
    if (name != nullptr && name[0] == '/') return name;
  }
  Dl_info info;
  if (code != nullptr && dladdr(code, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return {};
}

void log_append_failure(const std::string& file, const std::string& why) {
  if (why.empty()) return;
  core::log_once(core::LogLevel::kWarn, "record-write",
                 "cannot append to the record file " + file + " (" + why + "); compiles are not recorded");
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
    const std::string library_path = library_path_of(real.link_map, reinterpret_cast<const void*>(real.nvrtcVersion));
    log_append_failure(file, append_locked(file, core::encode_record(library_path, record.inputs, dependencies)));
  } catch (...) {
    core::log_once(core::LogLevel::kWarn, "record-exception", "internal error while recording a compile; not recorded");
  }
}

void append_handle_record(const std::string& file, core::JitLibrary library, const void* link_map, const void* code,
                          const keying::HandleInputs& inputs, const std::string& working_directory) noexcept {
  platform::ErrnoGuard errno_guard;
  try {
    core::HandleCallRecord record;
    record.library = library;
    record.library_path = library_path_of(link_map, code);
    record.working_directory = working_directory;
    record.inputs = inputs;
    log_append_failure(file, append_locked(file, core::encode_handle_record(record)));
  } catch (...) {
    core::log_once(core::LogLevel::kWarn, "record-exception",
                   "internal error while recording a link or NVVM compile; not recorded");
  }
}

}  // namespace nvrtc_cache::shim
