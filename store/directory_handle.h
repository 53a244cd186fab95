// DirectoryHandle and the safe directory walk. A cache directory is reached one component at a time
// from "/" (or the working directory, for a relative path) with openat(O_PATH | O_DIRECTORY |
// O_NOFOLLOW), so every check (owner, mode, filesystem) is made on the very directory that is then
// used, by handle: no path is resolved twice, and a component swapped for a link after the walk
// changes nothing. Missing components are created 0700 ("mkdir -p", the only one in the tree). A
// symbolic link above the last component is followed only when root or the effective user owns it
// (any owner with `allow_shared`), its target walked the same way (at most 40 links); the last
// component is never followed. On Windows, where no owner is reported and so every link above the
// last component is followed, the walk is one open of the whole path (platform::
// whole_path_open_is_the_walk: the system follows those links and opens the last component itself),
// taken component by component only where that open fails: to create what is missing, to name what is
// refused, or for a path with "..".
// Contract: filesystem access only through the given Env; handles are O_CLOEXEC and closed by their
// DirectoryHandle; thread-compatible; no exceptions beyond std::bad_alloc.
#pragma once

#include <sys/stat.h>

#include <string>

#include "platform/env.h"

namespace nvrtc_cache::store {

class DirectoryHandle {
 public:
  DirectoryHandle() = default;
  explicit DirectoryHandle(int fd) : fd_(fd) {}
  DirectoryHandle(DirectoryHandle&& other) noexcept : fd_(other.release()) {}
  DirectoryHandle& operator=(DirectoryHandle&& other) noexcept;
  DirectoryHandle(const DirectoryHandle&) = delete;
  DirectoryHandle& operator=(const DirectoryHandle&) = delete;
  ~DirectoryHandle();

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // A second descriptor on the same directory (invalid if dup fails).
  DirectoryHandle duplicate() const;

 private:
  int fd_ = -1;
};

struct DirectoryWalk {
  DirectoryHandle handle;  // valid on success
  bool unsafe = false;     // refused (a link, or something other than a directory), not an I/O failure
  int error = 0;           // the errno of the failure, when there is one
  std::string detail;      // on failure: one line naming the component
};

// Opens `path` (created where missing when `create`, with `create_mode`: 0700, or kGroupSharedDirectoryMode
// for a cache shared on purpose) by the walk described above.
DirectoryWalk open_directory_path(const std::string& path, bool create, bool allow_shared, platform::Env& env,
                                  mode_t create_mode = 0700);

// Opens the directory `name` inside `parent` (one component, never a link), creating it with `mode`
// (0700 unless a caller shares it; less the umask) when missing and `create`. `shown` names it in
// messages.
DirectoryWalk open_subdirectory(const DirectoryHandle& parent, const std::string& name, const std::string& shown,
                                bool create, platform::Env& env, mode_t mode = 0700);

// The modes of what a cache shared by a group on purpose (NVRTC_CACHE_SHARED=1) creates: directories
// the group can use, whose new files and directories take the directory's group (setgid), and files
// the group can read and write. Applied whatever the umask (platform::Env::make_directory_at, and the callers
// that create files).
inline constexpr mode_t kGroupSharedDirectoryMode = 02770;
inline constexpr mode_t kGroupSharedFileMode = 0660;

// st_dev/st_ino equality (platform::file_id(), platform/env.h).
inline bool same_file(const struct stat& a, const struct stat& b) {
  return platform::file_id(a) == platform::file_id(b);
}

}  // namespace nvrtc_cache::store
